"""The scales and integer forms a conversion makes (int8.quantize, the *_convert modules).

Every format is symmetric (zero point 0): weights int8 in [-127, 127] with s_w = max|W| / 127;
activations int8 in [-128, 127] with s = max|a| / 127 over the calibration set; biases int32
at scale s_x s_w. A step from scale s_in to s_out is the real multiplier r = s_in / s_out,
held as the ints (m, s, p, cap) of `fixed_point`; rounding is half up everywhere.
"""

import array
import math

from ulab import numpy as np

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .fixedpoint import bias_room, fixed_point, scale_range
from . import kernels
from .numbers import FLIP, quantize_tensor

SATURATE = 128
"""|v r| beyond this saturates int8 whatever the rounding: the `limit` of a requantize."""


def multiplier(s_in, s_out, limit=SATURATE):
    """The fixed-point form of s_in / s_out."""
    return fixed_point(s_in / s_out, limit)


def round_half_up(v):
    """Round half up, as the kernels do."""
    return int(math.floor(v + 0.5))


def max_abs(a):
    """max |a| of a ulab array, as a float."""
    return float(np.max(np.maximum(a, -a)))


def scale_for(max_abs_value):
    """int8 scale for values up to max_abs_value, rounded up to a step (fixedpoint.py's
    scale_range), as a float32: the model in memory holds the scale its file holds, on a port
    of double floats too."""
    return array.array("f", (scale_range(max_abs_value) / 127.0,))[0]


def int8_weights(W):
    """(offset-binary bytes of W row-major, s_w): per-tensor symmetric, [-127, 127]."""
    s_w = scale_for(max_abs(W))
    u = quantize_tensor(W, s_w, low=-127)
    out = bytearray(len(u))
    kernels.lookup(u, out, len(u), FLIP)
    return out, s_w


def int32_bias(b, scale, depth):
    """int32 b / scale, checked so that depth * 2^14 + |b_q| stays inside int32."""
    if b is None:
        return None
    q = array.array("i", bytes(4 * len(b)))
    room = bias_room(depth)
    for j, v in enumerate(b.tolist()):
        q[j] = round_half_up(v / scale)
        if abs(q[j]) > room:
            raise ValueError("bias %d is %r at scale %r: the int32 accumulator would "
                             "overflow" % (j, v, scale))
    return q
