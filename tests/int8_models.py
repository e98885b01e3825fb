"""The device's int8 quantization on the host, for tests that check a board bit for bit.

The device's `tinyattn.int8.quantize` computes scales, multipliers and rounded weights in its own
float (float32 on a board and a real ulab, float64 with the stand-in), so the int8 model it
makes from given float weights differs from one port to another in the last bits. A board
case that must match the integer reference bit for bit therefore runs a model the host made:
`quantize` here follows device/tinyattn/int8/ (convert.py, numbers.py, layers.py,
attention.py, norm.py, encoder.py) step for step in float64 (calibration on the float reference, max |.| / 127 scales
held as the float32 a board holds, the device's own fixed_point), `model_bytes` writes it in
the device's file format (kind "quantized") for `tinyattn.int8.load`, and `reference_layers` gives
reference.int8_encoder the very specs and arrays in the file. The device's own
quantization is checked by the cases against the float reference instead.

Kinds: Dense, Activation, Tokens, SelfAttention, GlobalAvgPool, PositionalEmbedding,
LayerNorm, Gelu and TransformerEncoderLayer (its self-attention with biases). A model is
(specs, arrays): the layers' specs (QSequential.description()["layers"]) and their int arrays
named "<index>.<name>".
"""

import os
import tempfile
from functools import partial

import numpy as np

from int8_numbers import (add_multipliers, int8_weights, int32_bias, max_abs,  # noqa: F401
                          multiplier, quantize_tensor, round_half_up, scale_for)
from tinyattn_host import modelfile
from tinyattn_host.reference import int8 as ref
from tinyattn_host.reference import int8_encoder as qref
from tinyattn_host.reference.encoder import (ff_activation_forward, gelu_forward,
                                             layernorm_forward)
from tinyattn_host.reference.attention import ATTENTION_PARAMS, attention_forward
from tinyattn_host.reference.layers import activation_forward, dense_forward
from tinyattn_host.reference.sequential import int8_layers, sequential_forward

GELU = "gelu_erf"  # the table's name for the erf GELU (int8/layers.py's GELU)


# ---- layers: (spec, {name: int array}) -------------------------------------------------------
def dense(W, b, s_x, s_y, lo=-128, prefix=""):
    """QDense.from_float; s_y None keeps the int32 accumulator."""
    Wq, s_w = int8_weights(W)
    arrays = {prefix + "W": Wq}
    if b is not None:
        arrays[prefix + "b"] = int32_bias(b, s_x * s_w, W.shape[1])
    mult = None if s_y is None else multiplier(s_x * s_w, s_y)
    spec = {"kind": "Dense", "in": W.shape[1], "out": W.shape[0], "mult": mult, "s_x": s_x,
            "s_w": s_w, "s_y": s_y, "lo": lo}
    return spec, arrays


def activation(name, forward, s_x, s_y, prefix=""):
    """The table of forward at every int8 input: table[u] = round(f((u ^ 128) - 128) s_x) / s_y)."""
    values = np.array([((u ^ 128) - 128) * s_x for u in range(256)])
    spec = {"kind": "Activation", "name": name, "s_x": s_x, "s_y": s_y}
    return spec, {prefix + "table": quantize_tensor(forward(values), s_y)}


def layernorm(gamma, beta, eps, s_x, s_y, prefix=""):
    """QLayerNorm.from_float: gamma int8, beta int32 at the scale of z = xhat 2^FRACTION."""
    E = len(gamma)
    gq, s_g = int8_weights(gamma)
    s_z = s_g / (1 << qref.NORM_FRACTION)
    spec = {"kind": "LayerNorm", "E": E, "eps": qref.eps_units(eps, E, s_x),
            "mult": multiplier(s_z, s_y), "s_x": s_x, "s_g": s_g, "s_y": s_y}
    return spec, {prefix + "gamma": gq, prefix + "beta": int32_bias(beta, s_z, 512)}


def positional(P, s_x, s_y, prefix=""):
    s_p = scale_for(max_abs(P))
    spec = {"kind": "PositionalEmbedding", "seq_len": P.shape[0], "E": P.shape[1],
            "mults": add_multipliers(s_x, s_p, s_y), "s_x": s_x, "s_p": s_p, "s_y": s_y}
    return spec, {prefix + "P": quantize_tensor(P, s_p, low=-127)}


def projection_stats(x, p):
    """max |Q|, |K|, |V| of x (attention's calibration_stats)."""
    stats = {}
    for n in "qkv":
        b = p.get("b" + n)
        stats[n] = max_abs(x @ p["W" + n].T + (0.0 if b is None else b))
    return stats


def attention(p, stats, H, S, s_x, s_y, prefix=""):
    """QAttention.from_float: p {Wq..Wo, bq..bo (or None)}, stats {q, k, v: max |.|};
    s_y None keeps the int32 output; Wk with fewer rows than E: H_kv = its rows / D heads."""
    E = p["Wq"].shape[0]
    H_kv = p["Wk"].shape[0] // (E // H)
    scales, mults, arrays, bias = {"x": s_x, "y": s_y}, {}, {}, []
    for n in "qkvo":
        arrays[prefix + "W" + n], scales["w" + n] = int8_weights(p["W" + n])
    for n in "qkvo":
        if n == "o":
            scales["ctx"] = scales["v"]  # a context row is a convex combination of V rows
            s_acc = scales["ctx"] * scales["wo"]
            mults["out"] = None if s_y is None else multiplier(s_acc, s_y)
        else:
            scales[n] = scale_for(stats[n])
            s_acc = s_x * scales["w" + n]
            mults[n] = multiplier(s_acc, scales[n])
        if p.get("b" + n) is not None:
            arrays[prefix + "b" + n] = int32_bias(p["b" + n], s_acc, E)
            bias.append(n)
    score = scales["q"] * scales["k"] / ((E // H) ** 0.5) * ref.EXP_STEPS
    mults["score"] = list(ref.fixed_point(score, ref.EXP_LIMIT))
    mults["ctx"] = multiplier(scales["v"] / ref.PROB_ONE, scales["ctx"])
    spec = {"kind": "SelfAttention", "E": E, "H": H, "seq_len": S, "mults": mults,
            "scales": scales, "bias": bias}
    if H_kv != H:
        spec["H_kv"] = H_kv
    return spec, arrays


def _attention_params(p, head=""):
    return {n: p.get(head + n) for n in ATTENTION_PARAMS}


def encoder_stats(spec, p, x, mask=None):
    """int8/encoder.py's encoder_stats on the float64 reference: (y, {name: max |.|})."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec
    stats = {}

    def seen(name, value):
        stats[name] = max_abs(value)
        return value

    def sa(z):
        attn = _attention_params(p, "self_attn.")
        stats["attention"] = projection_stats(z, attn)
        return seen("a", attention_forward(z, attn, H, S, mask=mask, causal=causal)[0])

    def ff(z):
        f = seen("f1", dense_forward(z, p["linear1.W"], p["linear1.b"]))
        f = seen("act", ff_activation_forward(f, act))
        return seen("f2", dense_forward(f, p["linear2.W"], p["linear2.b"]))

    def norm(i, z):
        return layernorm_forward(z, p["norm%d.gamma" % i], p["norm%d.beta" % i], eps)[0]

    if norm_first:
        h = seen("h", x + sa(seen("n1", norm(1, x))))
        y = h + ff(seen("n2", norm(2, h)))
    else:
        h = seen("h", norm(1, seen("h0", x + sa(x))))
        y = norm(2, seen("y0", h + ff(h)))
    stats["out"] = max_abs(y)
    return y, stats


def encoder(spec, p, stats, s_x, s_y, prefix=""):
    """QTransformerEncoderLayer.from_float: ReLU folded into linear1, GELU a table."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec
    sc = lambda name: scale_for(stats[name])  # noqa: E731
    parts, arrays = {}, {}

    def add(name, made):
        parts[name] = made[0]
        arrays.update(made[1])

    def attn(s_in):
        add("self_attn", attention(_attention_params(p, "self_attn."), stats["attention"], H,
                                   S, s_in, sc("a"), prefix + "self_attn."))
        return sc("a")

    def ff(s_in):
        relu = act == "relu"
        add("linear1", dense(p["linear1.W"], p["linear1.b"], s_in,
                             sc("act" if relu else "f1"), 0 if relu else -128,
                             prefix + "linear1."))
        s_f = sc("act")
        if not relu:
            add("act", activation(GELU, gelu_forward, sc("f1"), s_f, prefix + "act."))
        add("linear2", dense(p["linear2.W"], p["linear2.b"], s_f, sc("f2"),
                             prefix=prefix + "linear2."))
        return sc("f2")

    def norm(i, s_in, s_out):
        add("norm%d" % i, layernorm(p["norm%d.gamma" % i], p["norm%d.beta" % i], eps, s_in,
                                    s_out, prefix + "norm%d." % i))
        return s_out

    if norm_first:
        s_a = attn(norm(1, s_x, sc("n1")))
        s_h = sc("h")
        adds = [add_multipliers(s_x, s_a, s_h)]
        adds.append(add_multipliers(s_h, ff(norm(2, s_h, sc("n2"))), s_y))
    else:
        s_h0 = sc("h0")
        adds = [add_multipliers(s_x, attn(s_x), s_h0)]
        s_h = norm(1, s_h0, sc("h"))
        s_y0 = sc("y0")
        adds.append(add_multipliers(s_h, ff(s_h), s_y0))
        norm(2, s_y0, s_y)
    return {"kind": "TransformerEncoderLayer", "seq_len": S, "norm_first": norm_first,
            "causal": causal, "adds": adds, "s_x": s_x, "s_y": s_y, "parts": parts}, arrays


# ---- a Sequential (quant) --------------------------------------------------------------------
MASKED_KINDS = ("SelfAttention", "GlobalAvgPool")  # (and the encoder layer) take the mask
def layer_params(params, i):
    """Layer i's parameters {name: array} of a Sequential's params "<i>.<name>"."""
    head = "%d." % i
    return {k[len(head):]: v for k, v in params.items() if k.startswith(head)}


def calibrate(config, params, x, mask=None):
    """int8/convert.py's _calibrate on the float64 reference: max |.| of every layer's input and
    output, of an attention's Q, K, V and of an encoder layer's intermediates (mask: the padding)."""
    stats = []
    for i, spec in enumerate(config):
        p, st = layer_params(params, i), {"in": max_abs(x)}
        if spec[0] == "TransformerEncoderLayer":
            x, extra = encoder_stats(spec, p, x, mask)
            st.update(extra)
        else:
            if spec[0] == "SelfAttention":
                st.update(projection_stats(x, p))
            x, _ = sequential_forward([spec], {"0." + k: v for k, v in p.items()}, x,
                                      mask if spec[0] in MASKED_KINDS else None)
            st["out"] = max_abs(x)
        stats.append(st)
    return stats


def quantize_layer(spec, p, stats, s_x, s_y, prefix):
    """int8/convert.py's _quantize_layer (each int8 class's quantize)."""
    kind = spec[0]
    if kind == "Dense":
        return dense(p["W"], p.get("b"), s_x, s_y, prefix=prefix)
    if kind == "Tokens":
        return {"kind": "Tokens", "seq_len": spec[1], "s_x": s_x}, {}
    if kind == "SelfAttention":
        return attention(_attention_params(p), stats, spec[2], spec[3], s_x, s_y, prefix)
    if kind == "Activation":
        s_y = s_x if spec[1] == "relu" else (s_y or scale_for(stats["out"]))  # relu: exact
        return activation(spec[1], partial(activation_forward, kind=spec[1]), s_x, s_y, prefix)
    s_y = s_y or scale_for(stats["out"])
    if kind == "GlobalAvgPool":
        mults = [list(multiplier(s_x / n, s_y)) for n in range(1, spec[1] + 1)]
        return {"kind": "GlobalAvgPool", "seq_len": spec[1], "mult": mults[-1], "s_x": s_x,
                "s_y": s_y, "by_count": mults}, {}
    if kind == "LayerNorm":
        return layernorm(p["gamma"], p["beta"], spec[2], s_x, s_y, prefix)
    if kind == "PositionalEmbedding":
        return positional(p["P"], s_x, s_y, prefix)
    if kind == "Gelu":
        return activation(GELU, gelu_forward, s_x, s_y, prefix)
    if kind == "TransformerEncoderLayer":
        return encoder(spec, p, stats, s_x, s_y, prefix)
    raise ValueError("no host quantizer for %r" % (kind,))


def quantize(config, params, calib, mask=None):
    """tinyattn.int8.quantize of the float Sequential (config, params "<i>.<name>") with calibration
    rows calib (and their padding mask): (specs, arrays named "<i>.<name>")."""
    stats = calibrate(config, params, calib, mask)
    specs, arrays = [], {}
    s_x = scale_for(stats[0]["in"])
    for i, (spec, st) in enumerate(zip(config, stats)):
        s_y = None if i == len(config) - 1 else scale_for(st["out"])
        made = quantize_layer(spec, layer_params(params, i), st, s_x, s_y, "%d." % i)
        specs.append(made[0])
        arrays.update(made[1])
        s_x = out_scale(made[0])
    return specs, arrays


def out_scale(spec):
    """The scale of a layer's output (its out_scale()): an int32 output's is its accumulator's."""
    kind = spec["kind"]
    if kind == "Tokens":
        return spec["s_x"]
    if kind == "Dense" and spec["mult"] is None:
        return spec["s_x"] * spec["s_w"]
    if kind == "SelfAttention":
        s = spec["scales"]
        return s["ctx"] * s["wo"] if spec["mults"]["out"] is None else s["y"]
    return spec["s_y"]


def in_scale(specs):
    """The model's input scale (QSequential.in_scale)."""
    return specs[0]["s_x"]


# ---- files and the integer reference ---------------------------------------------------------
def file_bytes(kind, meta, arrays):
    """A model file (the device's store format): its kind, JSON meta and named arrays."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.bin")
        modelfile.write_model(path, kind, meta, arrays)
        with open(path, "rb") as f:
            return f.read()


def model_bytes(specs, arrays):
    """The int8 model as tinyattn.int8.load reads it (QSequential.save's format)."""
    return file_bytes("quantized", {"layers": specs}, arrays)


def reference_layers(specs, arrays):
    """The layer dicts reference.sequential.int8_forward runs."""
    return int8_layers(specs, arrays)


def robust_input(x, scale, margin=1e-3):
    """x moved (by at most 2 margin scale) so that no x / scale lies within margin of a
    rounding boundary: the board's float32 quantize_tensor then rounds every value as the
    host does."""
    x = np.array(x, dtype=np.float64)
    for _ in range(4):
        t = np.clip(x / scale, -128, 127)
        frac = t - np.floor(t)
        near = (np.abs(frac - 0.5) < margin) & (np.abs(t) < 127)
        if not near.any():
            return x
        x = np.where(near, x + 2 * margin * scale, x).astype(np.float32).astype(np.float64)
    raise AssertionError("could not move x off the rounding boundaries")


def layer_files(specs, outputs):
    """({"layer<i>.bin": bytes} of every layer's output, [[typecode, rows, cols], ...]) for a
    board case's check.layers_match: int8, or little-endian int32 for a Dense that keeps its
    accumulator."""
    files, layers = {}, []
    for i, (spec, out) in enumerate(zip(specs, outputs)):
        wide = spec["kind"] == "Dense" and spec["mult"] is None  # the int32 accumulator
        dtype = np.dtype("<i4" if wide else "i1")
        assert np.array_equal(out.astype(dtype), out), "layer %d leaves its type" % i
        files["layer%d.bin" % i] = out.astype(dtype).tobytes()
        layers.append(["i" if wide else "b", *out.shape])
    return files, layers
