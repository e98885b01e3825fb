"""How each int8 layer of layers.py is made from its float layer (int8.quantize; a loaded
model holds none of it). A conversion, named by the int8 kind: `quantize(layer, stats, s_x,
s_y, seq_len)` from the float layer, its calibration stats (max |.| of its output "out",
...), the input's scale and the output's (None: the last layer's, from the stats or its own
accumulator) and the sequence length of a lone Attention; `from_float(...)` where the int8
layer is also made from parts of a larger one (an encoder layer's, a block's)."""

from ulab import numpy as np

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from .layers import QActivation, QDense, QGlobalAvgPool, QTokens
from .layers_schema import GELU
from .numbers import quantize_tensor
from .scales import int32_bias, int8_weights, multiplier, scale_for


class Dense:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return Dense.from_float(layer, s_x, s_y)

    @staticmethod
    def from_float(layer, s_x, s_y, lo=-128):
        """From a float Dense; s_y None keeps the int32 accumulator."""
        W, s_w = int8_weights(layer.W)
        b = int32_bias(layer.b, s_x * s_w, layer.in_features)
        mult = None if s_y is None else multiplier(s_x * s_w, s_y)
        return QDense(layer.in_features, layer.out_features, W, b, mult, s_x, s_w, s_y, lo)


class Activation:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        """From a float Activation or Gelu: the table of its forward (relu keeps s_x:
        max(v, 0) is exact)."""
        name = getattr(layer, "kind", GELU)
        s_y = s_x if name == "relu" else s_y or scale_for(stats["out"])
        return Activation.from_float(name, layer.forward, s_x, s_y)

    @staticmethod
    def from_float(name, forward, s_x, s_y):
        """The table of a float function: forward(2-D ulab array) -> the same shape."""
        values = [((u ^ 128) - 128) * s_x for u in range(256)]
        y = forward(np.array([values]))
        return QActivation(name, quantize_tensor(y, s_y), s_x, s_y)


class Tokens:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return QTokens(layer.seq_len, s_x)


class GlobalAvgPool:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return GlobalAvgPool.from_float(layer, s_x, s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, s_x, s_y):
        """The int8 pool of a float GlobalAvgPool: one multiplier s_x / n / s_y per count n."""
        S = layer.seq_len
        mults = [multiplier(s_x / n, s_y) for n in range(1, S + 1)]
        return QGlobalAvgPool(S, mults[-1], s_x, s_y, mults)
