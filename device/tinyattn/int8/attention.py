"""Multi-head self-attention in int8 (the float Attention's masks and causal flag), with
H_kv key/value heads (H_kv divides H; query head h reads K/V head h // (H / H_kv)).

Five kernel calls a forward: the Q, K and V projections (each requantized to int8 as it is
made; K and V written as offset binary, V transposed per sequence so that P V reads rows),
the attention core (scores Q_h K_h^T, integer softmax to Q0.15, P V_h requantized into the
context, for every sequence, head and query), and the output projection (int8, or int32 when
it is the model's last layer). attention_schema.py: its saved form's schema;
attention_convert.py: its making from a float Attention.
"""

import array

from . import backend, kernels
from . import kernels_attend
from .scratch import int8_buffer, signed
from ..nn.checks import require_2d
from .numbers import dequantize, flip, offset_binary, quantize_tensor

PROJECTIONS = ("q", "k", "v", "o")


class QAttention:
    """Self-attention of int8 x (B*S, E); `seq_len` is fixed for a Sequential's layer, else
    None (then give it to forward). Weights offset binary (Wk and Wv: E_kv = H_kv D rows),
    biases int32 (or None); mults {q, k, v, score, ctx, out (None: int32 output)}; scales
    {x, q, k, v, ctx, y, wq, ...}; num_kv_heads None is H (and the description has no
    H_kv)."""

    kind = "SelfAttention"

    def __init__(self, embed_dim, num_heads, seq_len, weights, biases, mults, scales,
                 num_kv_heads=None):
        self.embed_dim, self.num_heads, self.seq_len = embed_dim, num_heads, seq_len
        self.num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        self._h_kv = num_kv_heads  # the description's H_kv: None leaves it out
        self.head_dim = embed_dim // num_heads
        self.kv_dim = self.num_kv_heads * self.head_dim
        self.weights, self.mults, self.scales = weights, mults, scales  # biases: in headers
        self._kernels = None  # {projection: (linear kernel, its weights)}, at the first plan
        self._attend = None  # the attention core's function(header), made with the core
        E = embed_dim
        self.headers = dict(
            (n, kernels.linear_header(self.rows_of(n), E, biases[n],
                                      mults["out" if n == "o" else n]))
            for n in PROJECTIONS)
        self._bias = tuple(n for n in PROJECTIONS if biases[n] is not None)
        self.core, self._shape = None, None
        self.Q = self.K = self.VT = self.ctx = self.out = None
        self.scratch = None  # (Scratch, prefix): Q, K, V^T, ctx and an int8 out shared
        self.out_code = "i" if mults["out"] is None else "b"  # the int32 accumulator, or int8

    def bias(self, n):
        """Projection n's int32 bias (a new array, from its header), or None."""
        return kernels.header_bias(self.headers[n]) if n in self._bias else None

    def rows_of(self, n):
        """The output size of projection n: E_kv for k and v, else E."""
        return self.kv_dim if n in ("k", "v") else self.embed_dim

    @property
    def s_x(self):
        """The input's scale, as every int8 layer names it (the description keeps `scales`)."""
        return self.scales["x"]

    @property
    def s_y(self):
        return self.scales["y"]

    def out_scale(self):
        s = self.scales
        return s["ctx"] * s["wo"] if self.mults["out"] is None else s["y"]

    def plan(self, src, rows, cols, seq_len=None, trace=False):
        E, H, D = self.embed_dim, self.num_heads, self.head_dim
        S = self.seq_len if seq_len is None else seq_len
        if cols != E:
            raise ValueError("x has %d columns, the attention needs %d" % (cols, E))
        if not isinstance(S, int) or S < 1 or rows % S:
            raise ValueError("x has %d rows, not a multiple of the sequence length %r"
                             % (rows, S))
        if self._shape != (rows, S):
            n, ekv, shared = rows * E, self.kv_dim, self.scratch
            self.Q, self.ctx = int8_buffer(shared, "Q", n), int8_buffer(shared, "ctx", n)
            if shared is None:
                self.K, self.VT = bytearray(rows * ekv), bytearray(rows * ekv)  # offset binary
            else:
                self.K, self.VT = shared[0].get(shared[1] + "K", rows * ekv), \
                    shared[0].get(shared[1] + "VT", rows * ekv)
            if self.mults["out"] is None:
                self.out = array.array("i", bytes(4 * n))
            else:
                self.out = int8_buffer(shared, "out", n)
            self.core = kernels_attend.attend_header(S, H, D, self.mults["score"],
                                                     self.mults["ctx"],
                                                     num_kv_heads=self.num_kv_heads)
            self._attend = backend.attend_kernel(S, D, self.mults["score"])
            self._shape = (rows, S)
        h, w = self.headers, self.weights
        kernels.bind_linear(h["q"], w["q"], rows, src, self.Q)
        kernels.bind_linear(h["k"], w["k"], rows, src, self.K, add=128)
        kernels.bind_linear(h["v"], w["v"], rows, src, self.VT, dst_row=1, dst_col=S, group=S,
                            group_stride=self.kv_dim * S, add=128)
        self.trace_scores = self.trace_probs = None
        if trace:
            self.trace_scores = array.array("i", bytes(4 * rows * H * S))
            self.trace_probs = array.array("H", bytes(2 * rows * H * S))
        kernels_attend.bind_attend(self.core, rows, self.Q, self.K, self.VT, self.ctx,
                            self.trace_scores, self.trace_probs)
        kernels.bind_linear(h["o"], w["o"], rows, self.ctx, self.out)
        self.linear_kernels()
        return self.out, rows, E

    def linear_kernels(self):
        """{projection: (the backend's linear kernel, its weights)}, made once."""
        if self._kernels is None:
            E, w = self.embed_dim, self.weights
            self._kernels = {n: backend.linear_kernel(w[n], self.rows_of(n), E) for n in w}
        return self._kernels

    def run(self):
        run_attention(self.headers, self._kernels, self._attend, self.core)

    def calls(self):
        """run()'s five calls as (function, a, b) triples."""
        h, linear = self.headers, self._kernels
        out = [(linear[n][0], h[n], linear[n][1]) for n in ("q", "k", "v")]
        return out + [(self._attend, self.core, None), (linear["o"][0], h["o"], linear["o"][1])]

    def set_keep(self, keep):
        """The keep bytes (B*S, 0 = padding key) of the next runs in a QSequential, or None."""
        kernels_attend.set_keep(self.core, keep, False)

    def forward_int(self, x, rows, cols, trace=None, seq_len=None, keep=None, causal=False):
        """int8 x (B*S, E) to int8 (B*S, E) (int32 with mult out None), in the layer's buffer.

        keep: B*S bytes, 0 where key j of sequence b is padding (b*S + j).
        trace: a dict that gets every intermediate (Q, K, V, scores, probs, ctx, acc).
        """
        self.plan(x, rows, cols, seq_len, trace is not None)
        kernels_attend.set_keep(self.core, keep, causal)
        self.run()
        if trace is not None:
            S, E = self._shape[1], self.kv_dim
            V = array.array("b", bytes(rows * E))
            for r in range(rows):
                first = r - r % S
                for c in range(E):
                    V[r * E + c] = self.VT[first * E + c * S + r - first] - 128
            trace.update(Q=signed(self.Q), K=flip(self.K), V=V, ctx=signed(self.ctx),
                         scores=self.trace_scores, probs=self.trace_probs, acc=self.out)
        return self.out, rows, self.embed_dim

    def forward(self, x, seq_len=None, mask=None, causal=False):
        """Float x (B*S, E) to float (B*S, E); mask (B, S) of 0/1 as for Attention."""
        rows, cols = require_2d("x", x)
        keep = keep_bytes(mask, rows, self.seq_len if seq_len is None else seq_len)
        xq = quantize_tensor(x, self.s_x)
        y, rows, cols = self.forward_int(xq, rows, cols, seq_len=seq_len, keep=keep,
                                         causal=causal)
        return dequantize(y, rows, cols, self.out_scale())

    @staticmethod
    def from_spec(spec, arrays, prefix):
        weights = dict((n, offset_binary(arrays, prefix + "W" + n)) for n in PROJECTIONS)
        biases = dict((n, arrays.get(prefix + "b" + n)) for n in PROJECTIONS)
        mults = dict((k, None if v is None else tuple(v)) for k, v in spec["mults"].items())
        return QAttention(spec["E"], spec["H"], spec["seq_len"], weights, biases, mults,
                          spec["scales"], spec.get("H_kv"))


def run_attention(headers, linear, attend, core):
    """The five kernel calls of an attention bound to `headers` (projections) and `core`:
    Q, K and V projections, attend(core), the output projection."""
    for n in ("q", "k", "v"):
        linear[n][0](headers[n], linear[n][1])
    attend(core)
    linear["o"][0](headers["o"], linear["o"][1])


def keep_bytes(mask, rows, S):
    """A float mask (B, S) of 0/1 (1 keeps a key) as the B*S bytes of kernels_attend.set_keep, or
    None for no mask; rows = B*S."""
    if mask is None:
        return None
    if getattr(mask, "shape", None) != (rows // S, S):
        raise ValueError("mask must have shape (%d, %d), got %r"
                         % (rows // S, S, getattr(mask, "shape", None)))
    return bytearray(1 if v != 0 else 0 for row in mask for v in row.tolist())

