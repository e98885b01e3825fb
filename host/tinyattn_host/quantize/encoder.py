"""A TransformerEncoderLayer on the host: its calibration statistics on the float64 reference
(int8/encoder_convert.py's encoder_stats) and its int8 form (encoder_convert.py's
TransformerEncoderLayer.from_float)."""

from ..reference.attention import attention_forward
from ..reference.encoder import ff_activation_forward, gelu_forward, layernorm_forward
from ..reference.layers import dense_forward
from .layers import GELU, activation, attention, attention_params, dense, layernorm, \
    projection_stats
from .numbers import add_multipliers, max_abs, scale_for

PARTS = ("self_attn", "linear1", "act", "linear2", "norm1", "norm2")
"""int8/encoder.py's PARTS: the order of an encoder layer's arrays in its file."""


def encoder_stats(spec, p, x, mask=None):
    """int8/encoder_convert.py's encoder_stats on the float64 reference: (y, {name: max |.|})."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec[:10]
    kv_heads = spec[10] if len(spec) > 10 else None
    stats = {}

    def seen(name, value):
        stats[name] = max_abs(value)
        return value

    def sa(z):
        attn = attention_params(p, "self_attn.")
        stats["attention"] = projection_stats(z, attn)
        return seen("a", attention_forward(z, attn, H, S, mask=mask, causal=causal,
                                                  num_kv_heads=kv_heads)[0])

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
    """encoder_convert.TransformerEncoderLayer.from_float: ReLU folded into linear1, GELU a
    table."""
    _, E, H, F, _, act, norm_first, eps, S, causal = spec[:10]  # num_kv_heads: in Wk's rows
    sc = lambda name: scale_for(stats[name])  # noqa: E731
    parts, part_arrays = {}, {}

    def add(name, made):
        parts[name], part_arrays[name] = made

    def attn(s_in):
        add("self_attn", attention(attention_params(p, "self_attn."), stats["attention"], H,
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
    arrays = {}
    for name in PARTS:  # the order of the board's file
        arrays.update(part_arrays.get(name, {}))
    return {"kind": "TransformerEncoderLayer", "seq_len": S, "norm_first": norm_first,
            "causal": causal, "adds": adds, "s_x": s_x, "s_y": s_y, "parts": parts}, arrays

