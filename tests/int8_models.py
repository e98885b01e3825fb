"""Int8 models made on the host, for the board cases to load and run bit for bit.

The device's `quant.quantize` computes scales, multipliers and rounded weights in its own
float (float32 on a board and a real ulab, float64 with the stand-in), so the int8 model it
makes from given float weights differs from one port to another in the last bits. A board
case that must match the integer reference bit for bit therefore runs a model the host made:
`quantize` here follows device/tinyattn/quant.py and qencoder.py step for step in float64
(calibration on the float reference, max |.| / 127 scales, the device's own fixed_point),
`model_bytes` writes it in the device's file format (kind "quantized") for `quant.load`, and
`reference_outputs` runs reference.integer_encoder on the very specs and arrays in the file.
The device's own quantization is checked by the cases against the float reference instead.

Kinds: Dense, Tokens, PositionalEmbedding, LayerNorm, Gelu, GlobalAvgPool and
TransformerEncoderLayer (its self-attention with biases).
"""

import math
import os
import tempfile

import numpy as np

from tinyattn_host import modelfile
from tinyattn_host.reference import integer as ref
from tinyattn_host.reference import integer_encoder as qref
from tinyattn_host.reference.attention import attention_forward
from tinyattn_host.reference.encoder import gelu_forward, layernorm_forward
from tinyattn_host.reference.layers import dense_forward, gap_forward, tokens_forward

FRACTION = 12  # qkernels_norm.FRACTION: z = xhat 2^12
EXP_STEPS, EXP_LIMIT, PROB_ONE = 256, 2848, 32768  # kernels.py's
GELU = "gelu_erf"


def f32(v):
    """A scale as the float32 a board holds (so that the board and the host agree on it)."""
    return float(np.float32(v))


def round_half_up(v):
    return np.floor(np.asarray(v, dtype=np.float64) + 0.5).astype(np.int64)


def max_abs(a):
    return float(np.abs(a).max())


def scale_for(m):
    return f32(max(m, 1e-6) / 127.0)


def quantize_tensor(x, scale, low=-128):
    """saturate(round(x / scale), low, 127) as int8, rounded half up (quantize_tensor's)."""
    return round_half_up(np.clip(np.asarray(x) / scale, low, 127)).astype(np.int8)


def int8_weights(W):
    s_w = scale_for(max_abs(W))
    return quantize_tensor(W, s_w, low=-127), s_w


def int32_bias(b, scale, depth):
    q = round_half_up(np.asarray(b) / scale)
    assert np.abs(q).max() <= 2 ** 31 - 1 - depth * 16384, "bias overflows int32"
    return q.astype(np.int32)


def multiplier(s_in, s_out, limit=128):
    return list(ref.fixed_point(s_in / s_out, limit))


def add_multipliers(s_a, s_b, s_y):
    """qencoder.add_multipliers: one shift s, the larger multiplier in [2^14, 2^15)."""
    top = max(s_a, s_b) / s_y
    assert math.floor(top + 0.5) < 32768, "an add's input scale is over 2^15 its output's"
    s = 0
    while s < 30 and math.floor(top * (1 << (s + 1)) + 0.5) < 32768:
        s += 1
    return [math.floor(s_a / s_y * (1 << s) + 0.5), math.floor(s_b / s_y * (1 << s) + 0.5), s]


def eps_units(eps, E, s_x):
    return qref.eps_units(eps, E, s_x)


# ---- layers: (spec, {name: int array}) -------------------------------------------------------
def dense(W, b, s_x, s_y, lo=-128, prefix=""):
    Wq, s_w = int8_weights(W)
    arrays = {prefix + "W": Wq}
    if b is not None:
        arrays[prefix + "b"] = int32_bias(b, s_x * s_w, W.shape[1])
    mult = None if s_y is None else multiplier(s_x * s_w, s_y)
    spec = {"kind": "Dense", "in": W.shape[1], "out": W.shape[0], "mult": mult, "s_x": s_x,
            "s_w": s_w, "s_y": s_y, "lo": lo}
    return spec, arrays


def activation(forward, s_x, s_y, prefix=""):
    """The table of forward at every int8 input: table[u] = round(f((u ^ 128) - 128) s_x) / s_y)."""
    values = np.array([((u ^ 128) - 128) * s_x for u in range(256)])
    spec = {"kind": "Activation", "name": GELU, "s_x": s_x, "s_y": s_y}
    return spec, {prefix + "table": quantize_tensor(forward(values), s_y)}


def layernorm(gamma, beta, eps, s_x, s_y, prefix=""):
    E = len(gamma)
    gq, s_g = int8_weights(gamma)
    s_z = s_g / (1 << FRACTION)
    spec = {"kind": "LayerNorm", "E": E, "eps": eps_units(eps, E, s_x),
            "mult": multiplier(s_z, s_y), "s_x": s_x, "s_g": s_g, "s_y": s_y}
    return spec, {prefix + "gamma": gq, prefix + "beta": int32_bias(beta, s_z, 512)}


def positional(P, s_x, s_y, prefix=""):
    s_p = scale_for(max_abs(P))
    spec = {"kind": "PositionalEmbedding", "seq_len": P.shape[0], "E": P.shape[1],
            "mults": add_multipliers(s_x, s_p, s_y), "s_x": s_x, "s_p": s_p, "s_y": s_y}
    return spec, {prefix + "P": quantize_tensor(P, s_p, low=-127)}


def attention(p, stats, H, S, s_x, s_y, prefix=""):
    """QAttention.from_float: p {Wq..Wo, bq..bo}, stats {q, k, v: max |.|}."""
    E = p["Wq"].shape[0]
    scales, mults, arrays = {"x": s_x, "y": s_y}, {}, {}
    for n in "qkvo":
        arrays[prefix + "W" + n], scales["w" + n] = int8_weights(p["W" + n])
    for n in "qkv":
        scales[n] = scale_for(stats[n])
        s_acc = s_x * scales["w" + n]
        arrays[prefix + "b" + n] = int32_bias(p["b" + n], s_acc, E)
        mults[n] = multiplier(s_acc, scales[n])
    scales["ctx"] = scales["v"]
    s_acc = scales["ctx"] * scales["wo"]
    arrays[prefix + "bo"] = int32_bias(p["bo"], s_acc, E)
    mults["out"] = None if s_y is None else multiplier(s_acc, s_y)
    score = scales["q"] * scales["k"] / math.sqrt(E // H) * EXP_STEPS
    mults["score"] = list(ref.fixed_point(score, EXP_LIMIT))
    mults["ctx"] = multiplier(scales["v"] / PROB_ONE, scales["ctx"])
    spec = {"kind": "SelfAttention", "E": E, "H": H, "seq_len": S, "mults": mults,
            "scales": scales, "bias": list("qkvo")}
    return spec, arrays


def encoder_stats(spec, p, x):
    """qencoder.encoder_stats on the float64 reference: (y, {name: max |.|})."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec
    stats = {}

    def seen(name, value):
        stats[name] = max_abs(value)
        return value

    def sa(z):
        attn = {n: p["self_attn." + n] for n in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")}
        a, cache = attention_forward(z, attn, H, S, causal=causal)
        stats["attention"] = {n: max_abs(cache[n.upper() + "_cache"]) for n in "qkv"}
        return seen("a", a)

    def ff(z):
        f = seen("f1", dense_forward(z, p["linear1.W"], p["linear1.b"]))
        f = seen("act", np.maximum(f, 0.0) if act == "relu" else gelu_forward(f))
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
    """QTransformerEncoderLayer.from_float."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec
    sc = lambda name: scale_for(stats[name])  # noqa: E731
    parts, arrays = {}, {}

    def add(name, made):
        parts[name] = made[0]
        arrays.update(made[1])

    def attn(s_in):
        add("self_attn", attention({n: p["self_attn." + n] for n in (
            "Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")}, stats["attention"], H, S, s_in,
            sc("a"), prefix + "self_attn."))
        return sc("a")

    def ff(s_in):
        relu = act == "relu"
        add("linear1", dense(p["linear1.W"], p["linear1.b"], s_in,
                             sc("act" if relu else "f1"), 0 if relu else -128,
                             prefix + "linear1."))
        s_f = sc("act")
        if not relu:
            add("act", activation(gelu_forward, sc("f1"), s_f, prefix + "act."))
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


# ---- a Sequential ----------------------------------------------------------------------------
def _layer_params(params, i):
    head = "%d." % i
    return {k[len(head):]: v for k, v in params.items() if k.startswith(head)}


def _forward(spec, p, x):
    """One float layer and its calibration stats (quant._calibrate)."""
    kind = spec[0]
    if kind == "TransformerEncoderLayer":
        return encoder_stats(spec, p, x)
    if kind == "Dense":
        y = dense_forward(x, p["W"], p.get("b"))
    elif kind == "Tokens":
        y = tokens_forward(x, spec[1])
    elif kind == "PositionalEmbedding":
        y = x + np.tile(p["P"], (x.shape[0] // spec[1], 1))
    elif kind == "LayerNorm":
        y = layernorm_forward(x, p["gamma"], p["beta"], spec[2])[0]
    elif kind == "Gelu":
        y = gelu_forward(x)
    elif kind == "GlobalAvgPool":
        y = gap_forward(x, spec[1])
    else:
        raise ValueError("no host quantizer for %r" % (kind,))
    return y, {"out": max_abs(y)}


def quantize(config, params, calib):
    """quant.quantize of the float Sequential (config, params "<i>.<name>") with calibration
    rows calib: (specs, arrays named "<i>.<name>")."""
    stats, x = [], calib
    for i, spec in enumerate(config):
        st = {"in": max_abs(x)}
        x, extra = _forward(spec, _layer_params(params, i), x)
        st.update(extra)
        stats.append(st)
    specs, arrays = [], {}
    s_x = scale_for(stats[0]["in"])
    for i, (spec, st) in enumerate(zip(config, stats)):
        last = i == len(config) - 1
        s_y = None if last else scale_for(st["out"])
        p, prefix, kind = _layer_params(params, i), "%d." % i, spec[0]
        if kind == "Dense":
            made = dense(p["W"], p.get("b"), s_x, s_y, prefix=prefix)
        elif kind == "Tokens":
            made = {"kind": "Tokens", "seq_len": spec[1], "s_x": s_x}, {}
        else:
            s_y = s_y or scale_for(st["out"])
            if kind == "GlobalAvgPool":
                made = ({"kind": "GlobalAvgPool", "seq_len": spec[1],
                         "mult": multiplier(s_x / spec[1], s_y), "s_x": s_x, "s_y": s_y}, {})
            elif kind == "LayerNorm":
                made = layernorm(p["gamma"], p["beta"], spec[2], s_x, s_y, prefix)
            elif kind == "PositionalEmbedding":
                made = positional(p["P"], s_x, s_y, prefix)
            elif kind == "Gelu":
                made = activation(gelu_forward, s_x, s_y, prefix)
            else:
                made = encoder(spec, p, st, s_x, s_y, prefix)
        specs.append(made[0])
        arrays.update(made[1])
        s_x = _out_scale(made[0])
    return specs, arrays


def _out_scale(spec):
    if spec["kind"] == "Tokens":
        return spec["s_x"]
    if spec["kind"] == "Dense" and spec["mult"] is None:
        return spec["s_x"] * spec["s_w"]
    return spec["s_y"]


def in_scale(specs):
    """The model's input scale (QSequential.in_scale)."""
    return specs[0]["s_x"]


def model_bytes(specs, arrays):
    """The int8 model as quant.load reads it (QSequential.save's format)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.bin")
        modelfile.write_model(path, "quantized", {"layers": specs}, arrays)
        with open(path, "rb") as f:
            return f.read()


def reference_layers(specs, arrays):
    return qref.layers_from_specs(specs, arrays)


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
