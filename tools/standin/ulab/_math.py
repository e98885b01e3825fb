"""Element-wise functions of ulab.numpy: exp, log, sqrt, tanh, sin, cos, floor, around, and
the two- and three-argument ones: maximum, minimum, clip, where. (`abs(a)` is the builtin, as
ulab has no `np.abs`.)"""

import math

from . import _dtypes as dt
from ._array import as_array, empty, ndarray
from ._create import from_nested
from ._broadcast import MAX, MIN, binary, broadcast_row, broadcast_shape, unary

_float = float
_NAN = _float("nan")
_INF = _float("inf")


def _each(fn):
    """fn on a number (a float back) or element-wise on an array, a list or a tuple."""
    def each(x):
        if isinstance(x, (int, _float)):
            return fn(x)
        if not isinstance(x, ndarray):
            x = from_nested(x)
        return unary(x, fn)
    return each


def _log(v):
    return math.log(v) if v > 0 else (-_INF if v == 0 else _NAN)


def _sqrt(v):
    return math.sqrt(v) if v >= 0 else _NAN


def _exp(v):
    return math.exp(v) if v < 89 else _INF  # float32 overflows past e^88.7


exp = _each(_exp)
log = _each(_log)
sqrt = _each(_sqrt)
tanh = _each(math.tanh)
sin = _each(math.sin)
cos = _each(math.cos)
floor = _each(lambda v: _float(math.floor(v)))


def _half_away(v):
    return _float(math.floor(v + 0.5) if v >= 0 else -math.floor(0.5 - v))


def around(a, decimals=0):
    """Rounded half away from zero to `decimals` places (negative: tens, hundreds...)."""
    if not isinstance(a, ndarray):
        raise TypeError("first argument must be an ndarray")
    scale = 10.0 ** decimals
    return unary(a, lambda v: _half_away(v * scale) / scale)


def maximum(a, b):
    if isinstance(a, (int, _float)) and isinstance(b, (int, _float)):
        return a if a >= b else b
    return binary(a, b, MAX)


def minimum(a, b):
    if isinstance(a, (int, _float)) and isinstance(b, (int, _float)):
        return a if a <= b else b
    return binary(a, b, MIN)


def clip(a, a_min, a_max):
    """maximum(minimum(a, a_max), a_min), in that order (as ulab: a_min wins over a_max)."""
    return maximum(minimum(a, a_max), a_min)


def where(condition, x, y):
    """x where condition is true, else y; the three broadcast together."""
    c, x, y = as_array(condition), as_array(x), as_array(y)
    shape = broadcast_shape(broadcast_shape(c.shape, x.shape), y.shape)
    out = empty(shape, dt.result(x._dtype, y._dtype))
    for i in range(out._rows_count()):
        keep = broadcast_row(c, shape, i)
        xs, ys = broadcast_row(x, shape, i), broadcast_row(y, shape, i)
        out._set_row(i, [p if k else q for k, p, q in zip(keep, xs, ys)])
    return out
