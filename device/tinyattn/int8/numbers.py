"""Numbers of the int8 path: floats to int8 and back, and int8 buffers (scales.py: the scales
and integer forms a conversion makes).

Every format is symmetric (zero point 0): activations int8 in [-128, 127] at scale s;
weights held as offset binary (w + 128); rounding is half up everywhere.
"""

import array

from ulab import numpy as np

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from ..nn.checks import require_2d
from . import kernels

FLIP = bytearray(u ^ 128 for u in range(256))  # int8 <-> offset binary, as a lookup table


def flip(buf):
    """A copy of an int8 buffer as offset binary, or of an offset-binary one as int8."""
    out = int8_buffer(len(buf))
    kernels.lookup(buf, out, len(buf), FLIP)
    return out


def offset_binary(arrays, name):
    """The int8 array arrays[name] as offset binary: read straight into a byte buffer and
    flipped in place where `arrays` reads it from a file (read_bytes: one buffer, no copy),
    else a flipped copy."""
    read = getattr(arrays, "read_bytes", None)
    if read is None:
        return flip(arrays[name])
    buf = read(name)
    kernels.lookup(buf, buf, len(buf), FLIP)
    return buf


def int8_buffer(n):
    """A zeroed int8 array of n items."""
    return array.array("b", bytes(n))


def quantize_tensor(x, scale, low=-128, out=None):
    """A 2-D float array as int8 (row-major array 'b'): saturate(round(x / scale), low, 127).

    Rounds half up: u = round(clamp(x / scale, low, 127) + 128) in [low + 128, 255] is made
    by ulab's float to uint8 conversion (C's round(), half away from zero, on values >= 0),
    then a table lookup turns u into the int8 u - 128. `out` (rows * cols items) is reused.
    """
    rows, cols = require_2d("x", x)
    if out is None:
        out = array.array("b", bytes(rows * cols))
    kernels.need("out", out, 1, rows * cols)
    quantize_into(x, 1.0 / scale, low, out)
    return out


def quantize_into(x, inverse_scale, low, out):
    """quantize_tensor's work, unchecked: out must hold the rows * cols of the 2-D x."""
    _quantize(x, inverse_scale, low, float(low), 127.0, 128.0, out)


NOT_FINITE = "x holds NaN or infinity; the int8 model takes finite input"


def _quantize(x, inverse_scale, low_value, low, high, offset, out):
    """x * inverse_scale clamped to [low, high] (low_value: low as an int), + offset, rounded
    as uint8, as int8 in out (the numbers Python floats or one-element arrays: the same
    float32 operations)."""
    rows, cols = x.shape
    # the NaN check: one row summed whole (a float); more a row at a time (a 2-D sum(x)
    # copies x: the digits model's FORWARD_INT8 after QUANTIZE did not fit 300k on i686)
    total = float(np.sum(x) if rows == 1 else np.sum(np.sum(x, axis=1)))
    if total - total != 0:  # NaN or infinity, or finite numbers whose sum overflows
        from ..nn.checks import all_finite

        if not all_finite(x):
            raise ValueError(NOT_FINITE)
    u = _offset_bytes(x, inverse_scale, low_value, low, high, offset)
    try:
        u = memoryview(u)  # ulab's buffer
    except TypeError:  # the stand-in has none
        u = bytearray(u.flatten().tolist())
    kernels.table_lookup(u, out, rows * cols, FLIP)


def _offset_bytes(x, inverse_scale, low_value, low, high, offset):
    """uint8(clip(x * inverse_scale, low, high) + offset), a ulab array of x's shape."""
    v = x * inverse_scale  # then clamped (one row: only when a value is out) and offset
    if x.shape[0] > 1 or np.min(v) < low_value or np.max(v) > 127:
        v = _clip(v, low, high)
    v += offset
    return np.array(v, dtype=np.uint8)


def dequantize(values, rows, cols, scale):
    """An int buffer of rows * cols items times scale (a float or a one-element array), as a
    float (rows, cols) ulab array."""
    y = np.array(values).reshape((rows, cols))
    y *= scale
    return y


def _clip(v, low, high):
    """v clamped to [low, high] (ulab's clip; two maximums where a ulab has none)."""
    clip = getattr(np, "clip", None)
    if clip is not None:
        return clip(v, low, high)
    return -np.maximum(-np.maximum(v, low), -high)
