"""One float layer to its int8 form on the host, as device/tinyattn/int8/ makes it (each int8
class's from_float / quantize): (spec, {name: int array}), every scale's arithmetic in a
board's float32 (numbers.py)."""

import numpy as np

from ..reference import int8 as ref
from ..reference import int8_encoder as qref
from ..reference.attention import ATTENTION_PARAMS
from .numbers import (add_multipliers, f32, int8_weights, int32_bias, max_abs, multiplier,
                      over, quantize_tensor, scale_for, times)

GELU = "gelu_erf"  # the table's name for the erf GELU (int8/layers.py's GELU)


# ---- layers: (spec, {name: int array}) -------------------------------------------------------
def dense(W, b, s_x, s_y, lo=-128, prefix=""):
    """layers_convert.Dense.from_float; s_y None keeps the int32 accumulator."""
    Wq, s_w = int8_weights(W)
    arrays = {prefix + "W": Wq}
    if b is not None:
        arrays[prefix + "b"] = int32_bias(b, times(s_x, s_w), W.shape[1])
    mult = None if s_y is None else multiplier(times(s_x, s_w), s_y)
    spec = {"kind": "Dense", "in": W.shape[1], "out": W.shape[0], "mult": mult, "s_x": s_x,
            "s_w": s_w, "s_y": s_y, "lo": lo}
    return spec, arrays


def activation(name, forward, s_x, s_y, prefix=""):
    """The table of forward at every int8 input: table[u] = round(f((u ^ 128) - 128) s_x) / s_y)."""
    values = np.array([times((u ^ 128) - 128, s_x) for u in range(256)])
    spec = {"kind": "Activation", "name": name, "s_x": s_x, "s_y": s_y}
    return spec, {prefix + "table": quantize_tensor(forward(values), s_y)}


def layernorm(gamma, beta, eps, s_x, s_y, prefix=""):
    """norm_convert.LayerNorm.from_float: gamma int8, beta int32 at the scale of
    z = xhat 2^FRACTION."""
    E = len(gamma)
    gq, s_g = int8_weights(gamma)
    s_z = over(s_g, 1 << qref.NORM_FRACTION)
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
    """attention_convert.SelfAttention.from_float: p {Wq..Wo, bq..bo (or None)}, stats
    {q, k, v: max |.|}; s_y None keeps the int32 output; Wk with fewer rows than E: H_kv = its rows / D heads."""
    E = p["Wq"].shape[0]
    H_kv = p["Wk"].shape[0] // (E // H)
    scales, mults, arrays, bias = {"x": s_x, "y": s_y}, {}, {}, []
    for n in "qkvo":
        arrays[prefix + "W" + n], scales["w" + n] = int8_weights(p["W" + n])
    for n in "qkvo":
        if n == "o":
            scales["ctx"] = scales["v"]  # a context row is a convex combination of V rows
            s_acc = times(scales["ctx"], scales["wo"])
            mults["out"] = None if s_y is None else multiplier(s_acc, s_y)
        else:
            scales[n] = scale_for(stats[n])
            s_acc = times(s_x, scales["w" + n])
            mults[n] = multiplier(s_acc, scales[n])
        if p.get("b" + n) is not None:
            arrays[prefix + "b" + n] = int32_bias(p["b" + n], s_acc, E)
            bias.append(n)
    score = f32(scales["q"]) * f32(scales["k"]) / f32(E // H) ** f32(0.5) * ref.EXP_STEPS
    mults["score"] = list(ref.fixed_point(score, ref.EXP_LIMIT))
    mults["ctx"] = multiplier(over(scales["v"], ref.PROB_ONE), scales["ctx"])
    spec = {"kind": "SelfAttention", "E": E, "H": H, "seq_len": S, "mults": mults,
            "scales": scales, "bias": bias}
    if H_kv != H:
        spec["H_kv"] = H_kv
    return spec, arrays


def attention_params(p, head=""):
    return {n: p.get(head + n) for n in ATTENTION_PARAMS}

