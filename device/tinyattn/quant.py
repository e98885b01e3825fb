"""Post-training int8 quantization: quantize(model, calibration_x) and the int8 model.

Formats (every one symmetric, zero point 0):
- weights: int8 in [-127, 127], one scale per tensor, s_w = max|W| / 127;
- activations: int8 in [-128, 127], s = max|a| / 127 over the calibration set (the
  attention context takes V's scale: a convex combination of V rows cannot exceed it);
- biases: int32, b_q = round(b / (s_x s_w)), so they add straight into the accumulator;
- softmax probabilities: unsigned Q0.15 (kernels.PROB_ONE = 32768 is 1.0).
A step from scale s_in to scale s_out is the real multiplier r = s_in / s_out, held as the
ints (m, s, p, cap) of `fixed_point`; rounding is half up (toward +inf) everywhere.

The int8 model takes float input, quantizes it once, runs only the integer kernels and
dequantizes its output; a last Dense (or Attention) layer keeps its int32 accumulator, which
is dequantized directly. `save(path)` and `load(path)` use store's file format (kind
"quantized").
"""

import array
import math

from ulab import numpy as np

from . import kernels, store
from .attention import Attention
from .layers import Activation, Dense, GlobalAvgPool, SelfAttention, Sequential, Tokens

QUANTIZED = "quantized"
SATURATE = 128
"""|v r| beyond this saturates int8 whatever the rounding: the `limit` of a requantize."""


# ---- numbers -----------------------------------------------------------------------------
def fixed_point(r, limit):
    """(m, s, p, cap) with v r ~ ((clamp(v, -cap, cap) >> p) m + 2^(s-1)) >> s.

    cap: the smallest |v| with |v r| > limit (beyond it the result saturates, or the exp
    table is 0); p makes cap >> p < 2^15; m in [2^14, 2^15) carries 15 significant bits.
    """
    if not r > 0 or r == math.inf:
        raise ValueError("multiplier must be a finite number > 0, got %r" % (r,))
    cap = min(int(limit / r) + 1, 2147483647)
    p = 0
    while (cap >> p) >= 32768:
        p += 1
    t = r * (1 << p)
    s = 0
    while t * (1 << s) < 16384 and s < 30:
        s += 1
    m = int(math.floor(t * (1 << s) + 0.5))
    if m >= 32768:
        m, s = (m + 1) >> 1, s - 1
        if s < 0:
            m, s = 32767, 0
    return m, s, p, cap


def _round(v):
    """Round half up, as the kernels do."""
    return int(math.floor(v + 0.5))


def _max_abs(a):
    return float(np.max(np.maximum(a, -a)))


def _scale(max_abs):
    """int8 scale for values up to max_abs (a tiny floor keeps an all-zero tensor usable)."""
    return max(max_abs, 1e-6) / 127.0


def quantize_tensor(x, scale, low=-128):
    """A 2-D float array as int8 (row-major array 'b'): saturate(round(x / scale), low, 127).

    Rounds half up: u = round(clamp(x / scale, low, 127) + 128) in [low + 128, 255] is made
    by ulab's float to uint8 conversion (C's round(), half away from zero, on values >= 0),
    then a table lookup turns u into the int8 u - 128.
    """
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError("x must be a 2-D ulab array, got shape %r" % (shape,))
    total = float(np.sum(np.sum(x, axis=1)))
    if total != total:
        raise ValueError("x holds NaN (or +inf and -inf)")
    rows, cols = shape
    y = -np.maximum(-np.maximum(x * (1.0 / scale), float(low)), -127.0)
    u = np.array(y + 128.0, dtype=np.uint8)  # C round(): v >= 0 becomes floor(v + 0.5)
    out = array.array("b", bytes(rows * cols))
    kernels.lookup(bytearray(u.flatten().tolist()), out, rows * cols, _OFFSET_BINARY)
    return out


_OFFSET_BINARY = bytearray(u ^ 128 for u in range(256))  # u to the int8 u - 128


def dequantize(values, rows, cols, scale):
    """An int buffer (rows, cols) times scale as a float (rows, cols) ulab array."""
    y = np.zeros((rows, cols))
    for i in range(rows):
        y[i, :] = np.array(values[i * cols:(i + 1) * cols])
    y *= scale
    return y


def _weights(W):
    """(int8 array of W row-major, s_w): per-tensor symmetric, [-127, 127]."""
    s_w = _scale(_max_abs(W))
    return quantize_tensor(W, s_w, low=-127), s_w


def _bias(b, scale, depth):
    """int32 b / scale, checked so that depth * 2^14 + |b_q| stays inside int32."""
    if b is None:
        return None
    q = array.array("i", [0] * len(b))
    room = 2147483647 - depth * 16384
    for j, v in enumerate(b.tolist()):
        q[j] = _round(v / scale)
        if abs(q[j]) > room:
            raise ValueError("bias %d is %r at scale %r: the int32 accumulator would "
                             "overflow" % (j, v, scale))
    return q


def _mult(s_in, s_out, limit=SATURATE):
    return fixed_point(s_in / s_out, limit)


def _int8(n):
    return array.array("b", bytes(n))


def _int32(n):
    return array.array("i", bytes(4 * n))


# ---- quantized layers --------------------------------------------------------------------
class QDense:
    """y = x W^T + b in int8: int32 accumulator, then requantize (or keep it, mult None)."""

    kind = "Dense"

    def __init__(self, in_features, out_features, W, b, mult, s_x, s_w, s_y):
        self.in_features, self.out_features = in_features, out_features
        self.W, self.b, self.mult = W, b, mult
        self.s_x, self.s_w, self.s_y = s_x, s_w, s_y

    @staticmethod
    def from_float(layer, s_x, s_y):
        W, s_w = _weights(layer.W)
        b = _bias(layer.b, s_x * s_w, layer.in_features)
        mult = None if s_y is None else _mult(s_x * s_w, s_y)
        return QDense(layer.in_features, layer.out_features, W, b, mult, s_x, s_w, s_y)

    def out_scale(self):
        return self.s_x * self.s_w if self.mult is None else self.s_y

    def forward_int(self, x, rows, cols, trace=None):
        """int8 x (rows, in) to int8 (rows, out), or int32 when mult is None."""
        if cols != self.in_features:
            raise ValueError("x has %d columns, Dense needs %d" % (cols, self.in_features))
        n = self.out_features
        acc = _int32(rows * n)
        kernels.matmul_xwt(x, self.W, acc, rows, n, cols, bias=self.b)
        if self.mult is None:
            return acc, rows, n
        y = _int8(rows * n)
        kernels.requantize(acc, y, rows, n, self.mult)
        return y, rows, n

    def spec(self):
        return {"kind": "Dense", "in": self.in_features, "out": self.out_features,
                "mult": self.mult, "s_x": self.s_x, "s_w": self.s_w, "s_y": self.s_y}

    def arrays(self, prefix):
        out = [(prefix + "W", self.W, "b", (self.out_features, self.in_features))]
        if self.b is not None:
            out.append((prefix + "b", self.b, "i", (self.out_features,)))
        return out

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QDense(spec["in"], spec["out"], arrays[prefix + "W"], arrays.get(prefix + "b"),
                      _tuple(spec["mult"]), spec["s_x"], spec["s_w"], spec["s_y"])


class QActivation:
    """An activation as a 256-entry int8 table: table[v & 255] = round(f(v s_x) / s_y)."""

    kind = "Activation"

    def __init__(self, name, table, s_x, s_y):
        self.name, self.table, self.s_x, self.s_y = name, table, s_x, s_y

    @staticmethod
    def from_float(layer, s_x, s_y):
        if layer.kind == "relu":
            s_y = s_x  # max(v, 0) exactly
        values = [((u ^ 128) - 128) * s_x for u in range(256)]
        y = layer.forward(np.array([values]))
        return QActivation(layer.kind, quantize_tensor(y, s_y), s_x, s_y)

    def out_scale(self):
        return self.s_y

    def forward_int(self, x, rows, cols, trace=None):
        y = _int8(rows * cols)
        kernels.lookup(x, y, rows * cols, self.table)
        return y, rows, cols

    def spec(self):
        return {"kind": "Activation", "name": self.name, "s_x": self.s_x, "s_y": self.s_y}

    def arrays(self, prefix):
        return [(prefix + "table", self.table, "b", (256,))]

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QActivation(spec["name"], arrays[prefix + "table"], spec["s_x"], spec["s_y"])


class QTokens:
    """(B, S*E) to (B*S, E): the same bytes, another shape."""

    kind = "Tokens"

    def __init__(self, seq_len, s_x):
        self.seq_len, self.s_x = seq_len, s_x

    def out_scale(self):
        return self.s_x

    def forward_int(self, x, rows, cols, trace=None):
        if cols % self.seq_len:
            raise ValueError("x has %d columns, not a multiple of seq_len %d"
                             % (cols, self.seq_len))
        return x, rows * self.seq_len, cols // self.seq_len

    def spec(self):
        return {"kind": "Tokens", "seq_len": self.seq_len, "s_x": self.s_x}

    def arrays(self, prefix):
        return []

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QTokens(spec["seq_len"], spec["s_x"])


class QGlobalAvgPool:
    """(B*S, E) to (B, E): int32 sums of each sequence's tokens, requantized by 1/S."""

    kind = "GlobalAvgPool"

    def __init__(self, seq_len, mult, s_x, s_y):
        self.seq_len, self.mult, self.s_x, self.s_y = seq_len, mult, s_x, s_y

    @staticmethod
    def from_float(layer, s_x, s_y):
        return QGlobalAvgPool(layer.seq_len, _mult(s_x / layer.seq_len, s_y), s_x, s_y)

    def out_scale(self):
        return self.s_y

    def forward_int(self, x, rows, cols, trace=None):
        S = self.seq_len
        if rows % S:
            raise ValueError("x has %d rows, not a multiple of seq_len %d" % (rows, S))
        B = rows // S
        sums = _int32(B * cols)
        kernels.sum_tokens(x, sums, B, S, cols)
        y = _int8(B * cols)
        kernels.requantize(sums, y, B, cols, self.mult)
        return y, B, cols

    def spec(self):
        return {"kind": "GlobalAvgPool", "seq_len": self.seq_len, "mult": self.mult,
                "s_x": self.s_x, "s_y": self.s_y}

    def arrays(self, prefix):
        return []

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QGlobalAvgPool(spec["seq_len"], _tuple(spec["mult"]), spec["s_x"], spec["s_y"])


_PROJECTIONS = ("q", "k", "v", "o")


class QAttention:
    """Multi-head self-attention in int8 (masks and causal as the float layer).

    Q, K, V: int8 from x @ W^T + b requantized; scores Q_h K_h^T in int32, read in place
    (head h is columns h*D of a (B*S, E) buffer); integer softmax to Q0.15; P V_h in int32
    requantized into the context's columns; then the output projection (int8, or int32
    with mult_out None). `seq_len` is fixed for a Sequential's SelfAttention, else None.
    """

    kind = "SelfAttention"

    def __init__(self, embed_dim, num_heads, seq_len, weights, biases, mults, scales):
        self.embed_dim, self.num_heads, self.seq_len = embed_dim, num_heads, seq_len
        self.head_dim = embed_dim // num_heads
        self.weights = weights  # {"q": int8 (E, E), ...}
        self.biases = biases  # {"q": int32 (E,) or None, ...}
        self.mults = mults  # q, k, v, score, ctx, out (None: int32 output)
        self.scales = scales  # x, q, k, v, ctx, y (None), wq, wk, wv, wo

    @staticmethod
    def from_float(layer, stats, s_x, s_y, seq_len):
        E, D = layer.embed_dim, layer.head_dim
        weights, biases, scales = {}, {}, {"x": s_x, "y": s_y}
        for name in _PROJECTIONS:
            weights[name], s_w = _weights(getattr(layer, "W" + name))
            scales["w" + name] = s_w
        for name in ("q", "k", "v"):
            scales[name] = _scale(stats[name])
        # each context row is a convex combination of V rows: V's scale never saturates,
        # whatever mask or causal flag the calibration did not see
        scales["ctx"] = scales["v"]
        mults = {}
        for name in ("q", "k", "v"):
            s_acc = s_x * scales["w" + name]
            biases[name] = _bias(getattr(layer, "b" + name), s_acc, E)
            mults[name] = _mult(s_acc, scales[name])
        s_acc = scales["ctx"] * scales["wo"]
        biases["o"] = _bias(layer.bo, s_acc, E)
        mults["out"] = None if s_y is None else _mult(s_acc, s_y)
        score = scales["q"] * scales["k"] / math.sqrt(D) * kernels.EXP_STEPS
        mults["score"] = fixed_point(score, kernels.EXP_LIMIT)
        mults["ctx"] = _mult(scales["v"] / kernels.PROB_ONE, scales["ctx"])
        return QAttention(E, layer.num_heads, seq_len, weights, biases, mults, scales)

    def out_scale(self):
        s = self.scales
        return s["ctx"] * s["wo"] if self.mults["out"] is None else s["y"]

    def forward_int(self, x, rows, cols, trace=None, seq_len=None, keep=None, causal=False):
        """int8 x (B*S, E) to int8 (B*S, E) (int32 with mult_out None).

        keep: a buffer of B*S bytes, 0 where key j of sequence b is padding (b*S + j).
        trace: a dict that gets every intermediate (Q, K, V, scores, probs, ctx, acc).
        """
        E, H, D = self.embed_dim, self.num_heads, self.head_dim
        S = self.seq_len if seq_len is None else seq_len
        if cols != E:
            raise ValueError("x has %d columns, the attention needs %d" % (cols, E))
        if not isinstance(S, int) or S < 1 or rows % S:
            raise ValueError("x has %d rows, not a multiple of the sequence length %r"
                             % (rows, S))
        B = rows // S
        acc = _int32(rows * E)
        qkv = {}
        for name in ("q", "k", "v"):
            kernels.matmul_xwt(x, self.weights[name], acc, rows, E, E, bias=self.biases[name])
            qkv[name] = _int8(rows * E)
            kernels.requantize(acc, qkv[name], rows, E, self.mults[name])
        Q, K, V = qkv["q"], qkv["k"], qkv["v"]
        scores, probs = _int32(S * S), array.array("H", bytes(2 * S * S))
        pv, ctx = _int32(S * D), _int8(rows * E)
        if trace is not None:
            trace.update(Q=Q, K=K, V=V, scores=_int32(B * H * S * S),
                         probs=array.array("H", bytes(2 * B * H * S * S)), ctx=ctx)
        for b in range(B):
            for h in range(H):
                at = b * S * E + h * D  # row b*S, column h*D
                kernels.matmul_xwt(Q, K, scores, S, S, D, x_off=at, x_stride=E,
                                   w_off=at, w_stride=E)
                kernels.softmax(scores, probs, S, S, self.mults["score"], keep=keep,
                                keep_off=b * S, causal=causal)
                kernels.probs_v(probs, V, pv, S, S, D, v_off=at, v_stride=E)
                kernels.requantize(pv, ctx, S, D, self.mults["ctx"], dst_off=at, dst_stride=E)
                if trace is not None:
                    block = (b * H + h) * S * S
                    trace["scores"][block:block + S * S] = scores
                    trace["probs"][block:block + S * S] = probs
        kernels.matmul_xwt(ctx, self.weights["o"], acc, rows, E, E, bias=self.biases["o"])
        if trace is not None:
            trace["acc"] = acc
        if self.mults["out"] is None:
            return acc, rows, E
        y = _int8(rows * E)
        kernels.requantize(acc, y, rows, E, self.mults["out"])
        return y, rows, E

    def forward(self, x, seq_len=None, mask=None, causal=False):
        """Float x (B*S, E) to float (B*S, E); mask (B, S) of 0/1 as for Attention."""
        rows, cols = _shape2(x)
        keep = None
        if mask is not None:
            S = self.seq_len if seq_len is None else seq_len
            if getattr(mask, "shape", None) != (rows // S, S):
                raise ValueError("mask must have shape (%d, %d), got %r"
                                 % (rows // S, S, getattr(mask, "shape", None)))
            keep = bytearray(1 if v != 0 else 0 for row in mask for v in row.tolist())
        xq = quantize_tensor(x, self.scales["x"])
        y, rows, cols = self.forward_int(xq, rows, cols, seq_len=seq_len, keep=keep,
                                         causal=causal)
        return dequantize(y, rows, cols, self.out_scale())

    def spec(self):
        return {"kind": "SelfAttention", "E": self.embed_dim, "H": self.num_heads,
                "seq_len": self.seq_len, "mults": self.mults, "scales": self.scales,
                "bias": [name for name in _PROJECTIONS if self.biases[name] is not None]}

    def arrays(self, prefix):
        E = self.embed_dim
        out = [(prefix + "W" + n, self.weights[n], "b", (E, E)) for n in _PROJECTIONS]
        out += [(prefix + "b" + n, self.biases[n], "i", (E,)) for n in _PROJECTIONS
                if self.biases[n] is not None]
        return out

    @staticmethod
    def from_spec(spec, arrays, prefix):
        weights = dict((n, arrays[prefix + "W" + n]) for n in _PROJECTIONS)
        biases = dict((n, arrays.get(prefix + "b" + n)) for n in _PROJECTIONS)
        mults = dict((k, _tuple(v)) for k, v in spec["mults"].items())
        return QAttention(spec["E"], spec["H"], spec["seq_len"], weights, biases, mults,
                          spec["scales"])


_KINDS = {"Dense": QDense, "Activation": QActivation, "Tokens": QTokens,
          "GlobalAvgPool": QGlobalAvgPool, "SelfAttention": QAttention}


class QSequential:
    """The int8 model: float input quantized once, int8 layers, dequantized output."""

    def __init__(self, layers):
        self.layers = list(layers)

    @property
    def in_scale(self):
        first = self.layers[0]
        return first.scales["x"] if isinstance(first, QAttention) else first.s_x

    def forward_int(self, x, rows, cols, trace=None):
        """Run the integer layers on int8 x; returns (buffer, rows, cols) of the last.

        trace: a list that gets (buffer, rows, cols) of every layer's output.
        """
        for layer in self.layers:
            x, rows, cols = layer.forward_int(x, rows, cols)
            if trace is not None:
                trace.append((x, rows, cols))
        return x, rows, cols

    def forward(self, x):
        """Float x (B, features) to float outputs (logits), through integer kernels only."""
        rows, cols = _shape2(x)
        xq = quantize_tensor(x, self.in_scale)
        y, rows, cols = self.forward_int(xq, rows, cols)
        return dequantize(y, rows, cols, self.layers[-1].out_scale())

    def save(self, path):
        """Write the int8 model to `path` (store's format, kind "quantized")."""
        arrays = []
        for i, layer in enumerate(self.layers):
            arrays += layer.arrays("%d." % i)
        store.write_file(path, QUANTIZED, {"layers": [l.spec() for l in self.layers]}, arrays)


def load(path):
    """The int8 model saved at `path` by QSequential.save."""
    kind, meta, stored = store.read_file(path)
    if kind != QUANTIZED:
        raise ValueError("%s holds a %r model, not a %r one" % (path, kind, QUANTIZED))
    arrays = dict((name, value) for name, _, value in stored)
    layers = []
    try:
        for i, spec in enumerate(meta["layers"]):
            layers.append(_KINDS[spec["kind"]].from_spec(spec, arrays, "%d." % i))
    except (KeyError, TypeError) as err:
        raise ValueError("%s has a bad quantized model description: %r" % (path, err))
    return QSequential(layers)


# ---- quantize ----------------------------------------------------------------------------
def quantize(model, calibration_x, seq_len=None):
    """The int8 version of a trained float model, scales from running calibration_x.

    model: a Sequential (Dense, Activation, Tokens, SelfAttention, GlobalAvgPool), a Dense,
    or an Attention (give its seq_len). Returns a QSequential; a lone Dense or Attention
    becomes a one-layer QSequential (its forward_int and forward are the layer's).
    """
    if isinstance(model, Sequential):
        layers = model.layers
    elif isinstance(model, (Dense, Attention)):
        layers = [model]
    else:
        raise ValueError("quantize takes a Sequential, Dense or Attention, got %s"
                         % type(model).__name__)
    _shape2(calibration_x)
    stats = _calibrate(layers, calibration_x, seq_len)
    quantized = []
    s_x = _scale(stats[0]["in"])
    for i, (layer, st) in enumerate(zip(layers, stats)):
        last = i == len(layers) - 1
        s_y = _scale(st["out"])
        if isinstance(layer, Dense):
            q = QDense.from_float(layer, s_x, None if last else s_y)
        elif isinstance(layer, Attention):
            S = getattr(layer, "seq_len", seq_len)
            q = QAttention.from_float(layer, st, s_x, None if last else s_y, S)
        elif isinstance(layer, Activation):
            q = QActivation.from_float(layer, s_x, s_y)
        elif isinstance(layer, Tokens):
            q = QTokens(layer.seq_len, s_x)
        elif isinstance(layer, GlobalAvgPool):
            q = QGlobalAvgPool.from_float(layer, s_x, s_y)
        else:
            raise ValueError("cannot quantize a %s layer" % type(layer).__name__)
        quantized.append(q)
        s_x = q.out_scale()
    return QSequential(quantized)


def _calibrate(layers, x, seq_len):
    """max|.| of every layer's input and output (and Q, K, V of attention)."""
    stats = []
    for layer in layers:
        st = {"in": _max_abs(x)}
        if isinstance(layer, Attention) and not isinstance(layer, SelfAttention):
            if seq_len is None:
                raise ValueError("quantizing an Attention needs its seq_len")
            x = layer.forward(x, seq_len)
        else:
            x = layer.forward(x)
        if isinstance(layer, Attention):
            st.update(q=_max_abs(layer.Q_cache), k=_max_abs(layer.K_cache),
                      v=_max_abs(layer.V_cache))
        st["out"] = _max_abs(x)
        stats.append(st)
    return stats


def _shape2(x):
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError("x must be a 2-D ulab array, got shape %r" % (shape,))
    return shape


def _tuple(mult):
    return None if mult is None else tuple(mult)
