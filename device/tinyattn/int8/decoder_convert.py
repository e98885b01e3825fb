"""How the int8 language model's RMSNorm and DecoderBlock (decoder.py) are made from their
float layers (layers_convert.py says what a conversion is; convert_lm.py calibrates a block
and makes its parts)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend, numbers  # noqa: F401
from .decoder import QDecoderBlock, QRMSNorm
from .scales import int8_weights, multiplier, round_half_up, scale_for


def eps_units(eps, E, s_x):
    """RMSNorm's eps in units of sum x^2: round(E eps / s_x^2), in [1, 2^29]."""
    v = min(E * eps / (s_x * s_x), 536870912.0)
    return max(1, round_half_up(v))


class RMSNorm:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return RMSNorm.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        E = layer.dim
        gamma, s_g = int8_weights(layer.gamma.reshape((1, E)))
        s_z = s_g * (E ** 0.5) / 4096  # z is x / sqrt(sum x^2) in Q12: rms's sqrt(E) here
        return QRMSNorm(E, gamma, eps_units(layer.eps, E, s_x), multiplier(s_z, s_y), s_x,
                        s_g, s_y)


class DecoderBlock:
    @staticmethod
    def quantize(layer, stats, s_x, s_y=None, seq_len=None):
        """From the statistics of its steps (DecoderBlock.calibrate: convert_lm.block_stats),
        inside its language model (a block has no plan: int8.quantize refuses it elsewhere)."""
        from .convert_lm import block_parts

        return QDecoderBlock(*block_parts(layer, stats, s_x, RMSNorm.from_float))
