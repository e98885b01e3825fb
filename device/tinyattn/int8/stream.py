"""Streaming causal inference in int8: a quantized causal model one token (frame) at a time,
an int8 key/value cache per encoder layer (the semantics of nn/stream.py's float Stream).

QStream(qmodel, window) takes a QSequential (tinyattn.int8.quantize of a causal Sequential);
step_int(xq) takes one frame's F int8 values at the model's input scale (forward_int's
input, one token of it) and returns (buffer, 1, out) of the last layer (int32 when it keeps
its accumulator); step(x_t) takes a float frame (1, F), quantized as QSequential.forward
quantizes, and returns the dequantized output (1, out).

The stream runs its own one-row copies of the model's layers (its headers and buffers, the
model's weights and kernels shared), so the model's forward_int is left as it was; what each
layer does is its kind's STREAM role (nn/spec.py), as in the float Stream:
- "skip" (Tokens): nothing; "row" (Dense, Activation, LayerNorm): on the one row, as in
  forward_int.
- "position" (PositionalEmbedding): token t (from reset()) adds row t of the table, kept when the window
  slides; the table has S rows, so S tokens, then reset() (ValueError after).
- "cache" (TransformerEncoderLayer, causal): its Q, K and V projections of the new row (K and V
  written, offset binary, into slot t mod W of the layer's cache: K rows, V^T columns), and
  the int8 attention core (kernels_attend, bind_query) of that query over the kept slots.
- "pool" (GlobalAvgPool): the masked mean (kernels_pool) of its last W input rows.
Integer sums do not depend on the order of the keys, so the ring's slot order changes
nothing: while t < W the output equals forward_int of the t + 1 tokens with a padding mask,
bit for bit; after, the answer of the cache (what nn/stream.py says), which
tinyattn_host.reference.int8_stream reproduces bit for bit.
"""

import array

from . import backend, kernels, kernels_attend
from .attention import run_attention
from .encoder import QTransformerEncoderLayer
from .layers import QActivation, QDense, QGlobalAvgPool
from .model import QSequential
from .norm import QLayerNorm, QPositional
from .numbers import int8_buffer
from ..nn.checks import require_2d
from ..nn.spec import STREAM, role


class QStream:
    """One int8 token at a time through `qmodel` (a QSequential) with a window of W tokens."""

    def __init__(self, qmodel, window):
        if not isinstance(qmodel, QSequential):
            raise ValueError("QStream takes an int8 QSequential, got %s" % type(qmodel).__name__)
        if not isinstance(window, int) or window < 1:
            raise ValueError("window must be an int >= 1, got %r" % (window,))
        self.window, self.limit, self.in_scale = window, None, qmodel.in_scale
        self.caches, self.pools, self.positional = [], [], None
        self.steps = []
        cols = None
        for layer in qmodel.layers:
            does = role(layer.kind, STREAM)
            if does == "skip":
                continue
            if cols is None:
                cols = _in_width(layer)
                self._x = int8_buffer(cols)
                src = self._x
            step = self._one_row(layer, does, window)
            src, _, cols = step.plan(src, 1, cols)
            if does == "cache":  # its plan set the core's flags for a
                self.caches[-1].bind_core()  # full forward: the cache's query, every step
            self.steps.append(step)
        if not self.steps:
            raise ValueError("a stream needs a layer besides Tokens")
        self._out, self._cols = src, cols
        self.out_code = qmodel.out_code()
        self._scale = qmodel.layers[-1].out_scale()
        from .quantizer import Quantizer

        self._numbers = Quantizer(1.0 / self.in_scale, -128, self._scale)
        self.reset()

    def _one_row(self, layer, does, W):
        if does == "row":
            return _row(layer)
        if does == "position":
            self.limit = layer.seq_len
            self.positional = _Positional(layer)
            return self.positional
        if does == "cache":
            if not layer.causal:
                raise ValueError("a stream needs causal encoder layers: quantize a model made "
                                 "with causal=True")
            p = layer.parts
            cache = _KVCache(p["self_attn"], W)
            self.caches.append(cache)
            parts = {"self_attn": cache, "linear1": _row(p["linear1"]),
                     "linear2": _row(p["linear2"]), "norm1": _row(p["norm1"]),
                     "norm2": _row(p["norm2"]),
                     "act": None if p["act"] is None else _row(p["act"])}
            return QTransformerEncoderLayer(parts, layer.adds, layer.norm_first, 1, False,
                                            layer.s_x, layer.s_y)
        if does == "pool":
            pool = _Pool(layer, W)
            self.pools.append(pool)
            return pool
        raise ValueError("a stream cannot run a %s layer" % layer.kind)

    def reset(self):
        """Forget every token: the next step is token 0 again."""
        self.t = 0
        for state in self.caches + self.pools:
            state.clear()

    def cache_bytes(self):
        """Bytes of the int8 state: each encoder layer's K and V rows (2 W E), each pool's W
        input rows (W E), and their W keep bytes."""
        return sum(state.nbytes() for state in self.caches + self.pools)

    def step_int(self, xq):
        """(buffer, 1, out) of the last layer for the next token's F int8 values xq (the
        buffer is the stream's own, overwritten by the next step)."""
        F = len(self._x)
        kernels.need("xq", xq, 1, 0)  # a buffer of bytes
        if len(xq) != F:
            raise ValueError("step takes one token of %d int8 values, got %d" % (F, len(xq)))
        t = self.t
        if self.limit is not None and t >= self.limit:
            raise ValueError("the positional table has %d rows: the stream took them all, "
                             "reset() to start again" % self.limit)
        self._x[:] = xq
        slot, kept = t % self.window, min(t + 1, self.window)
        if self.positional is not None:
            self.positional.at(t)
        for state in self.caches + self.pools:
            state.at(slot)
        for step in self.steps:
            step.run()
        self.t = t + 1
        return self._out, 1, self._cols

    def step(self, x_t):
        """The model's float output (1, out) for the next token x_t (1, F), quantized at the
        model's input scale."""
        rows, cols = require_2d("x_t", x_t)
        if rows != 1 or cols != len(self._x):
            raise ValueError("step takes one token, a (1, %d) array, got %r"
                             % (len(self._x), x_t.shape))
        self._numbers.quantize_into(x_t, self._x)
        y, rows, cols = self.step_int(self._x)
        return self._numbers.dequantize(y, rows, cols)


def _in_width(layer):
    for name in ("in_features", "E"):
        if hasattr(layer, name):
            return getattr(layer, name)
    raise ValueError("a stream's first layer (after Tokens) must set the width: Dense, "
                     "LayerNorm, PositionalEmbedding or an encoder layer, got %s" % layer.kind)


def _kernel(layer, w, cols, depth):
    """The model layer's backend kernel (made now if it has none yet), for a copy to share."""
    if layer._kernel is None:
        layer._kernel = backend.linear_kernel(w, cols, depth)
    return layer._kernel


def _row(layer):
    """A one-row copy of a "row" layer (QDense, QLayerNorm, QActivation) on its weights."""
    if isinstance(layer, QDense):
        return _dense(layer)
    if isinstance(layer, QLayerNorm):
        return QLayerNorm(layer.E, layer.gamma, layer.beta(), layer.eps, layer.mult, layer.s_x,
                          layer.s_g, layer.s_y)
    if isinstance(layer, QActivation):
        return QActivation(layer.name, layer.table, layer.s_x, layer.s_y)
    raise ValueError("a stream cannot run a %s layer on one row" % layer.kind)


def _dense(layer):
    """A one-row QDense on the model's weights and kernel."""
    copy = QDense(layer.in_features, layer.out_features, layer.W, layer.bias(), layer.mult,
                  layer.s_x, layer.s_w, layer.s_y, layer.lo)
    copy._kernel = _kernel(layer, layer.W, layer.out_features, layer.in_features)
    return copy


class _Positional(QPositional):
    """The positional add of one row: row t of the model's table (at(t) before run)."""

    def __init__(self, layer):
        QPositional.__init__(self, 1, layer.E, layer.P, layer.mults, layer.s_x, layer.s_p,
                             layer.s_y)
        self.table = memoryview(layer.P)

    def at(self, t):
        E = self.E
        self.P = self.table[t * E:(t + 1) * E]


class _KVCache:
    """An encoder layer's attention on one row: its int8 K rows and V^T columns (H_kv heads:
    E_kv = H_kv D a token) of the last W tokens (slot t mod W), keep bytes (1: a slot holds a
    token), the model's weights, kernels and multipliers; plan/run/out as the QAttention it
    stands in for. Its core is viper's (kernels_attend.attend) on every backend: the fast ones
    take no keep mask."""

    def __init__(self, attention, W):
        E, a = attention.embed_dim, attention
        self.E = self.embed_dim = E
        self.ekv = ekv = a.kv_dim
        self.W = W
        self.K, self.VT, self.keep = bytearray(W * ekv), bytearray(W * ekv), bytearray(W)
        self.q, self.ctx = int8_buffer(E), int8_buffer(E)
        self.out = int8_buffer(E)
        self.headers = dict((n, kernels.linear_header(a.rows_of(n), E, a.bias(n),
                                                      a.mults["out" if n == "o" else n]))
                            for n in ("q", "k", "v", "o"))
        self.weights, self.kernels = a.weights, a.linear_kernels()
        self.core = kernels_attend.attend_header(1, a.num_heads, a.head_dim, a.mults["score"],
                                                 a.mults["ctx"], kv_len=W,
                                                 num_kv_heads=a.num_kv_heads)
        self.bind_core()

    def bind_core(self):
        kernels_attend.bind_query(self.core, self.q, self.K, self.VT, self.ctx, self.keep)

    def clear(self):
        for buf in (self.K, self.VT, self.keep):
            buf[:] = bytes(len(buf))

    def nbytes(self):
        return len(self.K) + len(self.VT) + len(self.keep)

    def plan(self, src, rows, cols):
        h, w, E, W = self.headers, self.weights, self.E, self.W
        kernels.bind_linear(h["q"], w["q"], 1, src, self.q)
        kernels.bind_linear(h["o"], w["o"], 1, self.ctx, self.out)
        # K row and V^T column of the last slot bound (checked), then of slot 0: at() moves
        kernels.bind_linear(h["k"], w["k"], 1, src, self.K, dst_off=(W - 1) * self.ekv, add=128)
        kernels.bind_linear(h["v"], w["v"], 1, src, self.VT, dst_off=W - 1, dst_col=W, add=128)
        kernels.bind_linear(h["k"], w["k"], 1, src, self.K, add=128)
        kernels.bind_linear(h["v"], w["v"], 1, src, self.VT, dst_col=W, add=128)
        self.bases = (kernels.dst_field(h["k"]), kernels.dst_field(h["v"]))
        return self.out, 1, E

    def at(self, slot):
        """Point the K and V projections at `slot` for the next token, which it keeps."""
        h = self.headers
        kernels.move_dst(h["k"], self.bases[0], slot * self.ekv)
        kernels.move_dst(h["v"], self.bases[1], slot)
        self.keep[slot] = 1

    def run(self):
        run_attention(self.headers, self.kernels, kernels_attend.attend, self.core)


class _Pool:
    """GlobalAvgPool over the last W rows: a ring of W int8 rows, the masked mean of its kept
    rows (kernels_pool, the model's multiplier for each count)."""

    def __init__(self, layer, W):
        if layer.mults is None or W > layer.seq_len:
            raise ValueError("a stream's pooling needs the multipliers of 1 .. W kept tokens: "
                             "W <= the pool's seq_len (%d) in a model quantized with masks"
                             % layer.seq_len)
        self.W, self.pool = W, QGlobalAvgPool(W, layer.mults[W - 1], layer.s_x, layer.s_y,
                                              layer.mults[:W])
        self.keep = bytearray(W)
        self.ring = self.src = self.slot = None

    def clear(self):
        self.keep[:] = bytes(self.W)
        if self.ring is not None:
            self.ring[:] = bytes(len(self.ring))

    def nbytes(self):
        return len(self.ring) + len(self.keep)

    def plan(self, src, rows, cols):
        self.src, self.cols = src, cols
        self.ring = int8_buffer(self.W * cols)
        out = self.pool.plan(self.ring, self.W, cols)
        self.pool.set_keep(self.keep)
        return out

    def at(self, slot):
        self.slot = slot
        self.keep[slot] = 1

    def run(self):
        c = self.cols
        self.ring[self.slot * c:(self.slot + 1) * c] = self.src
        self.pool.run()
