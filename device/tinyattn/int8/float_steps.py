"""float_io's steps, found once for a Quantizer by bisection over float32 keys (imported for
that, then let go: numbers.Quantizer), with ulab's own operations: float_io's docstring."""

import array

import micropython

from .float_io import EXT, FIELDS, FIRST, LAST, LOW31, EXPONENT

_CHUNK = 64  # steps found at a time: the bisection's arrays stay small


@micropython.viper
def _midpoints(bounds: ptr32, floats: ptr32):
    """floats[k] = the bits of the key halfway between bounds' low and high k."""
    ext = bounds[0]
    low31 = bounds[2]
    n = bounds[3]
    lo = ptr32(int(bounds) + 16)
    hi = ptr32(int(bounds) + 16 + n * 4)
    for k in range(n):
        a = (lo[k] << ext) >> ext
        b = (hi[k] << ext) >> ext
        mid = (a >> 1) + (b >> 1) + (a & b & 1)  # no overflow on a 32-bit word
        floats[k] = mid ^ ((mid >> 31) & low31)


@micropython.viper
def _narrow(bounds: ptr32, u: ptr8):
    """Step first + k (first: bounds[1]) is at or below the midpoint k when u there is at
    least first + k: then high k = the midpoint, else low k."""
    ext = bounds[0]
    first = bounds[1]
    n = bounds[3]
    lo = ptr32(int(bounds) + 16)
    hi = ptr32(int(bounds) + 16 + n * 4)
    for k in range(n):
        a = (lo[k] << ext) >> ext
        b = (hi[k] << ext) >> ext
        mid = (a >> 1) + (b >> 1) + (a & b & 1)
        if u[k] >= first + k:
            hi[k] = mid
        else:
            lo[k] = mid


def steps(evaluate):
    """The table of to_int8 for `evaluate(floats)`: a (1, n) float32 ulab array to its u
    (a uint8 ulab array); None where ulab arrays lend no buffer (the stand-in)."""
    from ulab import numpy as np

    table = array.array("i", bytes(4 * (FIELDS + 256)))
    table[0], table[1], table[2] = EXT, EXPONENT, LOW31
    floats = np.zeros((1, _CHUNK))
    try:
        memoryview(floats)
    except TypeError:
        return None
    for first in range(0, 256, _CHUNK):
        bounds = array.array("i", [EXT, first, LOW31, _CHUNK] + [FIRST] * _CHUNK
                             + [LAST] * _CHUNK)
        for _ in range(32):  # the gap, under 2^32, halves each round down to 1
            _midpoints(bounds, floats)
            _narrow(bounds, memoryview(evaluate(floats)))
        for k in range(_CHUNK):
            table[FIELDS + first + k] = bounds[4 + _CHUNK + k]
    table[FIELDS] = FIRST  # u >= 0 everywhere
    return table
