"""How each int8 layer of norm.py is made from its float layer (layers_convert.py says what a
conversion is), and the scale arithmetic of int8 adds."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from . import kernels_norm as nk
from .norm import QLayerNorm, QPositional
from .numbers import quantize_tensor
from .scales import int32_bias, int8_weights, max_abs, multiplier, round_half_up, scale_for


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


class LayerNorm:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return LayerNorm.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        E = layer.normalized_shape
        gamma, s_g = int8_weights(layer.gamma.reshape((1, E)))
        s_z = s_g / (1 << nk.FRACTION)
        beta = int32_bias(layer.beta, s_z, 512)  # |z gamma| < 2^23 = 512 * 2^14
        return QLayerNorm(E, gamma, beta, eps_units(layer.eps, E, s_x), multiplier(s_z, s_y),
                          s_x, s_g, s_y)


class PositionalEmbedding:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return PositionalEmbedding.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        s_p = scale_for(max_abs(layer.P))
        P = quantize_tensor(layer.P, s_p, low=-127)
        return QPositional(layer.seq_len, layer.embed_dim, P, add_multipliers(s_x, s_p, s_y),
                           s_x, s_p, s_y)
