"""The int8 LayerNorm and positional add.

QLayerNorm normalises with integers only (kernels_norm.norm: integer mean and variance,
integer square root, int8 out); QPositional adds the int8 table P to every sequence. Each
follows the contract of int8/layers.py: planned once per shape, run with no allocation
(norm_schema.py: their saved form's schema; norm_convert.py: their making, and the scale
arithmetic of int8 adds).
"""

from . import kernels
from . import kernels_norm as nk
from . import scratch
from .numbers import int8_buffer, offset_binary


class QLayerNorm:
    """LayerNorm of int8 rows of E values: gamma int8 (offset binary in memory, scale s_g),
    beta int32 at s_g / 2^12, eps_q in units of V; out int8 at s_y."""

    kind = "LayerNorm"

    def __init__(self, E, gamma, beta, eps, mult, s_x, s_g, s_y):
        self.E, self.gamma, self.eps, self.mult = E, gamma, eps, mult  # beta: in the header
        self.s_x, self.s_g, self.s_y = s_x, s_g, s_y
        self.header = nk.norm_header(E, beta, eps, mult)
        self.out, self._rows = None, None
        self.scratch = None  # (Scratch, prefix): out shared (int8/scratch.py)

    def beta(self):
        """The int32 beta (a new array, from the header, which alone holds it)."""
        return nk.header_beta(self.header)

    def out_scale(self):
        return self.s_y

    def plan(self, src, rows, cols):
        if cols != self.E:
            raise ValueError("x has %d columns, LayerNorm needs %d" % (cols, self.E))
        if rows != self._rows:
            self.out, self._rows = scratch.int8_buffer(self.scratch, "out", rows * cols), rows
        nk.bind_norm(self.header, self.gamma, rows, src, self.out)
        return self.out, rows, cols

    def run(self):
        nk.norm(self.header, self.gamma)

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QLayerNorm(spec["E"], offset_binary(arrays, prefix + "gamma"),
                          arrays[prefix + "beta"],
                          spec["eps"], tuple(spec["mult"]), spec["s_x"], spec["s_g"],
                          spec["s_y"])


class QPositional:
    """x (B*S, E) plus the int8 table P (S, E, scale s_p) on every sequence, to int8 at s_y."""

    kind = "PositionalEmbedding"

    def __init__(self, seq_len, E, P, mults, s_x, s_p, s_y):
        self.seq_len, self.E, self.P, self.mults = seq_len, E, P, mults
        self.s_x, self.s_p, self.s_y = s_x, s_p, s_y
        kernels.need("P", P, 1, seq_len * E)
        self.header = nk.add_header(E, mults)
        self.out, self._rows = None, None

    def out_scale(self):
        return self.s_y

    def plan(self, src, rows, cols):
        if cols != self.E:
            raise ValueError("x has %d columns, the positional table %d" % (cols, self.E))
        if rows % self.seq_len:
            raise ValueError("x has %d rows, not a multiple of seq_len %d"
                             % (rows, self.seq_len))
        if rows != self._rows:
            self.out, self._rows = int8_buffer(rows * cols), rows
        nk.bind_add(self.header, rows, src, self.P, self.out, self.seq_len)
        return self.out, rows, cols

    def run(self):
        nk.add(self.header, self.P)

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QPositional(spec["seq_len"], spec["E"], arrays[prefix + "P"],
                           tuple(spec["mults"]), spec["s_x"], spec["s_p"], spec["s_y"])
