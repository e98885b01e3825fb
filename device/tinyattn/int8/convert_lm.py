"""int8.quantize of a language model (Embedding, DecoderBlock..., RMSNorm, Classifier): the
calibration is token ids, run through the float model a window of `window` tokens at a
time (each window from position 0), max |.| taken of every step of every block (its norms,
q and k before and after their turn, v, the output projection, the residuals, SwiGLU's
three products and silu); each step's scale is then scale_for of its max (numbers.py).
"""

from ulab import numpy as np

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .constants import EXP_LIMIT, EXP_STEPS, PROB_ONE
from .fixedpoint import fixed_point
from .scales import max_abs, multiplier, scale_for
from .layers_convert import Activation, Dense
from .model import QSequential
from .norm_convert import add_multipliers
from .classes import companion, int8_class

WINDOW = 64
"""Calibration tokens a window (the float forward's heap grows with its square)."""


def silu(a):
    """a sigmoid(a) on a ulab array (swiglu.py's form)."""
    return a * ((np.tanh(a * 0.5) + 1.0) * 0.5)


def quantize_lm(layers, tokens, window=WINDOW):
    """The QSequential of a float language model's layers, scales from the token ids: each
    layer quantized by its kind's conversion (int8/layers_convert.py), from its statistics and
    the scale of the layer before's output (a block's statistics are its steps': block_stats)."""
    from ..nn.embedding import token_ids
    from ..nn.spec import KINDS

    ids = token_ids(tokens if hasattr(tokens, "shape") else list(tokens),
                    layers[0].num_embeddings)  # a list of ids, or a (rows, 1) array
    if not isinstance(window, int) or window < 1:
        raise ValueError("window must be an int >= 1, got %r" % (window,))
    window = min(window, min([getattr(layer, "seq_len", window) for layer in layers]))
    stats = None
    for i in range(0, len(ids), window):
        got = _window_stats(layers, ids[i:i + window])
        stats = got if stats is None else [_larger(a, b) for a, b in zip(stats, got)]
    quantized = []
    for layer, st in zip(layers, stats):
        kind = type(layer).__name__
        cls = int8_class(KINDS[kind]) if kind in KINDS else None
        if cls is None or hasattr(cls, "plan"):  # (a planned model's kind: not a position's)
            raise ValueError("cannot quantize a %s layer of a language model" % kind)
        s_x = quantized[-1].out_scale() if quantized else None
        quantized.append(companion(cls, "convert").quantize(layer, st, s_x, None))
    return QSequential(quantized)


def _larger(a, b):
    return dict((k, b[k] if b[k] > a[k] or b[k] != b[k] else a[k]) for k in a)


def _window_stats(layers, ids):
    """[{step: max |.|}] of every layer on one window of token ids."""
    x = layers[0].forward(ids)
    stats = [{"out": max_abs(x)}]
    for layer in layers[1:]:
        calibrate = getattr(layer, "calibrate", None)  # a block's: its steps (block_stats)
        if calibrate is not None:
            x, st = calibrate(x)
        else:
            x = layer.forward(x)
            st = {"out": max_abs(x)}
        if not all(v == v and v < 1e38 for v in st.values()):
            raise ValueError("the calibration gives NaN or infinity in a %s: its weights are "
                             "too large to quantize" % type(layer).__name__)
        stats.append(st)
    return stats


def block_stats(block, x):
    """(y, {step: max |.|}) of a float DecoderBlock on the rows x (positions from 0)."""
    from ..nn.sdpa import scaled_dot_product_attention

    att, ff = block.attention, block.feed_forward
    st = {}
    a = block.attention_norm.forward(x)
    st["attention_norm"] = max_abs(a)
    q, k, v, _, _ = att.project(a, 0)
    st["q"] = max(max_abs(np.dot(a, att.wq.transpose())), max_abs(q))
    st["k"] = max(max_abs(np.dot(a, att.wk.transpose())), max_abs(k))
    st["v"] = max_abs(v)
    ctx = scaled_dot_product_attention(q, k, v, x.shape[0], att.n_heads,
                                       num_kv_heads=att.n_kv_heads, causal=True)
    o = np.dot(ctx, att.wo.transpose())
    st["wo"] = max_abs(o)
    h = x + o
    st["h"] = max_abs(h)
    b = block.ffn_norm.forward(h)
    st["ffn_norm"] = max_abs(b)
    g, u = np.dot(b, ff.w1.transpose()), np.dot(b, ff.w3.transpose())
    st["w1"], st["w3"] = max_abs(g), max_abs(u)
    g = silu(g)
    st["silu"] = max_abs(g)
    g = g * u
    st["gate"] = max_abs(g)
    f = np.dot(g, ff.w2.transpose())
    st["w2"] = max_abs(f)
    y = h + f
    st["out"] = max_abs(y)
    return y, st


class _Linear:
    """A weight matrix as layers_convert.Dense.from_float takes a Dense."""

    def __init__(self, W):
        self.W, self.b = W, None
        self.out_features, self.in_features = W.shape


def block_parts(block, st, s_x, norm):
    """(spec, parts, silu table) of the QDecoderBlock of a float DecoderBlock, from its
    statistics (block_stats) and input scale; norm: decoder_convert.RMSNorm.from_float
    (decoder_convert.DecoderBlock.quantize calls this)."""
    att, ff = block.attention, block.feed_forward
    s = dict((n, scale_for(st[n])) for n in st)
    parts = {"attention_norm": norm(block.attention_norm, s_x, s["attention_norm"]),
             "ffn_norm": norm(block.ffn_norm, s["h"], s["ffn_norm"])}
    for n, W, s_in, s_out in (("wq", att.wq, s["attention_norm"], s["q"]),
                              ("wk", att.wk, s["attention_norm"], s["k"]),
                              ("wv", att.wv, s["attention_norm"], s["v"]),
                              ("wo", att.wo, s["v"], s["wo"]),
                              ("w1", ff.w1, s["ffn_norm"], s["w1"]),
                              ("w3", ff.w3, s["ffn_norm"], s["w3"]),
                              ("w2", ff.w2, s["gate"], s["w2"])):
        parts[n] = Dense.from_float(_Linear(W), s_in, s_out)
    silu_table = Activation.from_float("silu", silu, s["w1"], s["silu"]).table
    D = att.head_dim
    spec = {"E": block.dim, "H": att.n_heads, "H_kv": att.n_kv_heads,
            "F": ff.hidden_dim, "seq_len": block.seq_len, "rope": att.rope,
            "theta": att.theta,
            "score": fixed_point(s["q"] * s["k"] / (D ** 0.5) * EXP_STEPS, EXP_LIMIT),
            "ctx": multiplier(s["v"] / PROB_ONE, s["v"]),
            "gate": multiplier(s["silu"] * s["w3"], s["gate"]), "s_silu": s["silu"],
            "adds": [list(add_multipliers(s_x, s["wo"], s["h"])),
                     list(add_multipliers(s["h"], s["w2"], s["out"]))],
            "s_x": s_x, "s_y": s["out"]}
    return spec, parts, silu_table

