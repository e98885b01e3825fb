"""The int8 LayerNorm and positional add, and the scale arithmetic of int8 adds.

QLayerNorm normalises with integers only (qkernels_norm.norm: integer mean and variance,
integer square root, int8 out); QPositional adds the int8 table P to every sequence. Each
follows the contract of qlayers: planned once per shape, run with no allocation.
"""

from . import kernels
from . import kernels_norm as nk
from . import scratch
from .numbers import flip, int32_bias, int8_buffer, int8_weights, max_abs, multiplier, \
    offset_binary, quantize_tensor, round_half_up, scale_for


def add_multipliers(s_a, s_b, s_y):
    """(ma, mb, s) with a s_a + b s_b ~ ((a ma + b mb + 2^(s-1)) >> s) s_y: one shift s
    (<= 30), the larger multiplier in [2^14, 2^15)."""
    top = max(s_a, s_b) / s_y
    if not round_half_up(top) < 32768:
        raise ValueError("an add's input scale is over 2^15 times its output's (%r, %r, %r)"
                         % (s_a, s_b, s_y))
    s = 0
    while s < 30 and round_half_up(top * (1 << (s + 1))) < 32768:
        s += 1
    return (round_half_up(s_a / s_y * (1 << s)), round_half_up(s_b / s_y * (1 << s)), s)


def eps_units(eps, E, s_x):
    """LayerNorm's eps in units of V = E^2 var / s_x^2, in [1, nk.MAX_EPS]."""
    v = min(E * E * eps / (s_x * s_x), 2147483648.0)  # rounded, clamped as an int (float32)
    return max(1, min(nk.MAX_EPS, round_half_up(v)))


class QLayerNorm:
    """LayerNorm of int8 rows of E values: gamma int8 (offset binary in memory, scale s_g),
    beta int32 at s_g / 2^12, eps_q in units of V; out int8 at s_y."""

    kind = "LayerNorm"
    FIELDS = {"E": "dim", "eps": "count", "mult": "mult", "s_x": "scale", "s_g": "scale",
              "s_y": "scale"}

    FLOAT = ("E",)  # int8/spec.py's float_config: the float entry's arguments

    def __init__(self, E, gamma, beta, eps, mult, s_x, s_g, s_y):
        self.E, self.gamma, self.eps, self.mult = E, gamma, eps, mult  # beta: in the header
        self.s_x, self.s_g, self.s_y = s_x, s_g, s_y
        self.header = nk.norm_header(E, beta, eps, mult)
        self.out, self._rows = None, None
        self.scratch = None  # (Scratch, prefix): out shared (int8/scratch.py)

    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return QLayerNorm.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        E = layer.normalized_shape
        gamma, s_g = int8_weights(layer.gamma.reshape((1, E)))
        s_z = s_g / (1 << nk.FRACTION)
        beta = int32_bias(layer.beta, s_z, 512)  # |z gamma| < 2^23 = 512 * 2^14
        return QLayerNorm(E, gamma, beta, eps_units(layer.eps, E, s_x), multiplier(s_z, s_y),
                          s_x, s_g, s_y)

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

    def spec(self):
        return {"kind": "LayerNorm", "E": self.E, "eps": self.eps, "mult": self.mult,
                "s_x": self.s_x, "s_g": self.s_g, "s_y": self.s_y}

    def arrays(self, prefix):
        return [(prefix + "gamma", flip(self.gamma), "b", (self.E,)),
                (prefix + "beta", self.beta(), "i", (self.E,))]

    @staticmethod
    def array_shapes(spec):
        return [("gamma", "b", (spec["E"],), True), ("beta", "i", (spec["E"],), True)]

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QLayerNorm(spec["E"], offset_binary(arrays, prefix + "gamma"),
                          arrays[prefix + "beta"],
                          spec["eps"], tuple(spec["mult"]), spec["s_x"], spec["s_g"],
                          spec["s_y"])


class QPositional:
    """x (B*S, E) plus the int8 table P (S, E, scale s_p) on every sequence, to int8 at s_y."""

    kind = "PositionalEmbedding"
    FIELDS = {"seq_len": "dim", "E": "dim", "mults": "add", "s_x": "scale", "s_p": "scale",
              "s_y": "scale"}

    FLOAT = ("seq_len", "E")

    def __init__(self, seq_len, E, P, mults, s_x, s_p, s_y):
        self.seq_len, self.E, self.P, self.mults = seq_len, E, P, mults
        self.s_x, self.s_p, self.s_y = s_x, s_p, s_y
        kernels.need("P", P, 1, seq_len * E)
        self.header = nk.add_header(E, mults)
        self.out, self._rows = None, None

    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return QPositional.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        s_p = scale_for(max_abs(layer.P))
        P = quantize_tensor(layer.P, s_p, low=-127)
        return QPositional(layer.seq_len, layer.embed_dim, P, add_multipliers(s_x, s_p, s_y),
                           s_x, s_p, s_y)

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

    def spec(self):
        return {"kind": "PositionalEmbedding", "seq_len": self.seq_len, "E": self.E,
                "mults": self.mults, "s_x": self.s_x, "s_p": self.s_p, "s_y": self.s_y}

    def arrays(self, prefix):
        return [(prefix + "P", self.P, "b", (self.seq_len, self.E))]

    @staticmethod
    def array_shapes(spec):
        return [("P", "b", (spec["seq_len"], spec["E"]), True)]

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QPositional(spec["seq_len"], spec["E"], arrays[prefix + "P"],
                           tuple(spec["mults"]), spec["s_x"], spec["s_p"], spec["s_y"])
