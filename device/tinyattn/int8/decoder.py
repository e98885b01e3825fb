"""The int8 language model's kinds: QRMSNorm and QDecoderBlock (with int8/lm.py's QEmbedding
and QClassifier), run a position at a time against an int8 key/value cache of H_kv heads.

They keep float generation's protocol (lm/generate.py): `forward(x)` of one row and a block's
`step(x, pos, cache)` and `new_cache(capacity)`, on int8 buffers, so tinyattn.generate runs an
int8 model as it runs a float one. A block, in int8 (each step's scale in its description):

    a = rmsnorm(x); q, k, v = a Wq^T, a Wk^T, a Wv^T (int8); q, k turned (rotary, Q14);
    k, v into the cache (K rows, V^T columns, offset binary); ctx = the int8 attention core
    (causal: the cache's positions 0..pos, the backend's core); h = x + ctx Wo^T;
    b = rmsnorm(h); y = h + (silu(b W1^T) * (b W3^T)) W2^T, silu a 256-entry table.

decoder_schema.py: their saved form's schema; decoder_convert.py: their making.
"""

from . import backend, kernels, kernels_attend
from . import kernels_decoder as dk
from . import kernels_norm as nk
from .layers import QDense
from .numbers import flip, int8_buffer
from .rotary_fixed import frequencies, table

PROJECTIONS = ("wq", "wk", "wv", "wo", "w1", "w3", "w2")
NORMS = ("attention_norm", "ffn_norm")


class QRMSNorm:
    """RMSNorm of int8 rows of E values: gamma int8 (offset binary in memory, scale s_g);
    out int8 at s_y; eps_q in units of sum x^2."""

    kind = "RMSNorm"

    def __init__(self, E, gamma, eps, mult, s_x, s_g, s_y):
        self.E, self.gamma, self.eps, self.mult = E, gamma, eps, mult
        self.s_x, self.s_g, self.s_y = s_x, s_g, s_y
        self.header = dk.rmsnorm_header(E, eps, mult)
        self.out = int8_buffer(E)

    def out_scale(self):
        return self.s_y

    def forward(self, x):
        """The normalized row of int8 x (E items): the layer's own buffer."""
        dk.rmsnorm(x, self.out, self.gamma, self.header)
        return self.out

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QRMSNorm(spec["E"], flip(arrays[prefix + "gamma"]), spec["eps"],
                        tuple(spec["mult"]), spec["s_x"], spec["s_g"], spec["s_y"])


class QDecoderBlock:
    """A Llama block in int8 (module docstring); parts QRMSNorm and QDense (no biases)."""

    kind = "DecoderBlock"

    def __init__(self, spec, parts, silu):
        self.E, self.H, self.H_kv, self.F = spec["E"], spec["H"], spec["H_kv"], spec["F"]
        self.seq_len, self.rope, self.theta = spec["seq_len"], spec["rope"], spec["theta"]
        self.score, self.ctx_mult, self.gate = spec["score"], spec["ctx"], spec["gate"]
        self.s_silu, self.adds = spec["s_silu"], spec["adds"]
        self.s_x, self.s_y = spec["s_x"], spec["s_y"]
        self.parts, self.silu = parts, silu
        self.D = self.E // self.H
        self.ekv = self.H_kv * self.D
        self.freqs = frequencies(self.D, self.theta)
        halves = self.rope == "half"
        self.turn_q = dk.rotary_header(self.H, self.D, halves)
        self.turn_k = dk.rotary_header(self.H_kv, self.D, halves, 128)
        self.gate_header = dk.product_header(self.F, self.gate)
        self.k_row, self.silu_out = int8_buffer(self.ekv), int8_buffer(self.F)
        self.gated, self.ctx = int8_buffer(self.F), int8_buffer(self.E)
        self.h, self.out = int8_buffer(self.E), int8_buffer(self.E)
        self.add1, self.add2 = nk.add_header(self.E, self.adds[0]), nk.add_header(self.E,
                                                                                   self.adds[1])
        self._src = self._cache = None

    def out_scale(self):
        return self.s_y

    def new_cache(self, capacity):
        """The int8 cache of `capacity` positions: K rows and V^T columns (H_kv D bytes a
        position, offset binary), the capacity, the attention core's header, the V
        projection's destination field (bound by _bind) and the core's function."""
        if not 1 <= capacity <= self.seq_len:
            raise ValueError("a cache of %d positions; the block's context is 1..%d"
                             % (capacity, self.seq_len))
        core = kernels_attend.attend_header(1, self.H, self.D, self.score, self.ctx_mult,
                                            kv_len=capacity, num_kv_heads=self.H_kv)
        attend = backend.attend_kernel(capacity, self.D, self.score)
        n = capacity * self.ekv
        return [bytearray(n), bytearray(n), capacity, core, None, attend]

    def _bind(self, x, cache):
        """Plan every part for int8 row x and the cache (once per source and cache)."""
        p = self.parts
        K, VT, T, core = cache[0], cache[1], cache[2], cache[3]
        a = p["attention_norm"].out
        q, _, _ = p["wq"].plan(a, 1, self.E)
        p["wk"].plan(a, 1, self.E)
        p["wv"].plan(a, 1, self.E)
        h = p["wv"].header  # V straight into the cache's column: moved to each position
        kernels.bind_linear(h, p["wv"].W, 1, a, VT, dst_off=T - 1, dst_col=T, add=128)
        kernels.bind_linear(h, p["wv"].W, 1, a, VT, dst_col=T, add=128)
        cache[4] = kernels.dst_field(h)
        kernels_attend.bind_query(core, q, K, VT, self.ctx)
        o, _, _ = p["wo"].plan(self.ctx, 1, self.E)
        nk.bind_add(self.add1, 1, x, o, self.h)
        b = p["ffn_norm"].out
        g, _, _ = p["w1"].plan(b, 1, self.E)
        p["w3"].plan(b, 1, self.E)
        f, _, _ = p["w2"].plan(self.gated, 1, self.F)
        nk.bind_add(self.add2, 1, self.h, f, self.out)
        self._src, self._cache = x, cache

    def step(self, x, pos, cache):
        """The int8 row after position `pos` of int8 row x (E), its k and v kept in cache."""
        if x is not self._src or cache is not self._cache:
            self._bind(x, cache)
        if not 0 <= pos < cache[2]:
            raise ValueError("position %d is outside the cache (%d)" % (pos, cache[2]))
        p = self.parts
        angles = table(pos, self.freqs)
        dk.set_angles(self.turn_q, angles)
        dk.set_angles(self.turn_k, angles, pos * self.ekv)
        kernels.move_dst(p["wv"].header, cache[4], pos)
        kernels_attend.set_position(cache[3], pos)
        p["attention_norm"].forward(x)
        for n in ("wq", "wk", "wv"):
            p[n].run()
        q, k = p["wq"].out, p["wk"].out
        dk.rotate(q, q, self.turn_q)
        dk.rotate(k, cache[0], self.turn_k)
        cache[5](cache[3])
        p["wo"].run()
        nk.add(self.add1, p["wo"].out)
        p["ffn_norm"].forward(self.h)
        p["w1"].run()
        p["w3"].run()
        kernels.table_lookup(p["w1"].out, self.silu_out, self.F, self.silu)
        dk.product(self.silu_out, p["w3"].out, self.gated, self.gate_header)
        p["w2"].run()
        nk.add(self.add2, p["w2"].out)
        return self.out

    @staticmethod
    def from_spec(spec, arrays, prefix):
        parts = {}
        for n in NORMS:
            parts[n] = QRMSNorm.from_spec(spec["parts"][n], arrays, prefix + n + ".")
        for n in PROJECTIONS:
            parts[n] = QDense.from_spec(spec["parts"][n], arrays, prefix + n + ".")
        return QDecoderBlock(spec, parts, arrays[prefix + "silu"])
