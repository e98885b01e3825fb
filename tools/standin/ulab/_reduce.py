"""Reductions of ulab.numpy, over the whole array (a number) or along `axis` (a 1-D array):
sum, mean, max, min, argmax, argmin, std, median; and dot."""

import array as _array
import math

from . import _dtypes as dt
from ._array import empty, ndarray
from ._create import from_nested

_sum = sum  # the builtins, before this module's names shadow them as ulab's do
_max = max
_min = min
_float = float


def _lines(a, axis):
    """The lists a reduction runs over: the whole array (axis None), or one per result item."""
    if not isinstance(a, ndarray):
        a = from_nested(a)
    if axis is None:
        if len(a.shape) == 1:
            return a, [a._row(0)]
        return a, [[v for i in range(a.shape[0]) for v in a._row(i)]]
    if axis < 0:
        axis += len(a.shape)
    if not 0 <= axis < len(a.shape):
        raise ValueError("axis is out of bounds")
    if len(a.shape) == 1:
        return a, [a._row(0)]
    rows = a.transpose() if axis == 0 else a
    return a, [rows._row(i) for i in range(rows.shape[0])]


def _reduce(a, axis, fn, kind, rowwise=False):
    """fn of each line; a number when the result is one item, else an array of `kind`
    (a function of the input's dtype). `rowwise`: fn of a whole 2-D array is fn of its rows'
    (no list of all its items is made)."""
    if rowwise and axis is None and isinstance(a, ndarray) and len(a.shape) == 2:
        return fn([fn(a._row(i)) for i in range(a.shape[0])])
    a, lines = _lines(a, axis)
    values = [fn(line) for line in lines]
    if axis is None or len(a.shape) == 1:
        return values[0]
    out = empty((len(values),), kind(a._dtype))
    out._set_row(0, values)
    return out


def _same(dtype):
    return dt.uint8 if dtype == dt.bool else dtype


def _floats(dtype):
    return dt.float


def _int16(dtype):
    return dt.int16


def sum(a, axis=None):
    if axis is not None and axis < 0:
        raise ValueError("axis must be None, or an integer")  # as ulab's sum (only)
    total = _reduce(a, axis, _sum, _same, rowwise=True)
    if axis is None and (not isinstance(a, ndarray) or a._dtype == dt.float):
        return _float(total)  # ulab: a float for a float array or a list, else an int
    return total


def _mean(line):
    return _sum(line) / len(line) if line else 0.0


def mean(a, axis=None):
    return _reduce(a, axis, _mean, _floats)


def _nonempty(line):
    if not line:
        raise ValueError("attempt to get (arg)min/(arg)max of empty sequence")
    return line


def max(a, axis=None):
    if not isinstance(a, ndarray):
        return _max(a)  # a list: its largest item, as ulab
    return _reduce(a, axis, lambda line: _max(_nonempty(line)), _same, rowwise=True)


def min(a, axis=None):
    if not isinstance(a, ndarray):
        return _min(a)
    return _reduce(a, axis, lambda line: _min(_nonempty(line)), _same, rowwise=True)


def argmax(a, axis=None):
    return _reduce(a, axis, lambda line: line.index(_max(_nonempty(line))), _int16)


def argmin(a, axis=None):
    return _reduce(a, axis, lambda line: line.index(_min(_nonempty(line))), _int16)


def std(a, axis=None, ddof=0):
    def deviation(line):
        n = len(line) - ddof
        if n <= 0:
            return _float("nan")
        m = _sum(line) / len(line)
        return math.sqrt(_sum([(v - m) * (v - m) for v in line]) / n)
    return _reduce(a, axis, deviation, _floats)


def median(a, axis=None):
    def middle(line):
        if not line:
            return _float("nan")
        s = sorted(line)
        h = len(s) // 2
        return _float(s[h]) if len(s) % 2 else (s[h - 1] + s[h]) / 2
    return _reduce(a, axis, middle, _floats)


def dot(a, b):
    """The matrix product (2-D and 1-D operands, any strides); a float for two 1-D ones."""
    if not isinstance(a, ndarray) or not isinstance(b, ndarray):
        raise TypeError("arguments must be ndarrays")
    a2 = a if len(a.shape) == 2 else a.reshape((1, a.shape[0]))
    b2 = b if len(b.shape) == 2 else b.reshape((b.shape[0], 1))
    if a2.shape[1] != b2.shape[0]:
        raise ValueError("dimensions do not match")
    bt = b2.transpose()
    cols = [_array.array("f", bt._row(j)) for j in range(bt.shape[0])]
    out = empty((a2.shape[0], b2.shape[1]))
    for i in range(a2.shape[0]):
        r = a2._row(i)
        out._set_row(i, [_sum([x * y for x, y in zip(r, c)]) for c in cols])
    if len(a.shape) == 1 and len(b.shape) == 1:
        return out[0, 0]
    if len(a.shape) == 1 or len(b.shape) == 1:
        return out.reshape((out.size,))
    return out
