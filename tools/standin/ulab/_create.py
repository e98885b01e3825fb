"""Making arrays, as ulab.numpy does: array, zeros, ones, full, empty, eye, arange, linspace,
frombuffer, concatenate."""

import array as _array

from . import _dtypes as dt
from ._array import empty as _empty
from ._array import missing, ndarray

_float = float


def from_nested(obj, dtype=dt.float):
    """An array from a sequence of numbers or of rows (sequences or 1-D arrays)."""
    if dtype not in dt.STORAGE:
        raise TypeError("wrong dtype")
    if isinstance(obj, (str, bytes)):
        raise ValueError("too many dimensions")
    rows = obj if isinstance(obj, list) else list(obj)
    if rows and not isinstance(rows[0], (int, float, bool, ndarray)):
        n = len(rows[0])
        out = _empty((len(rows), n), dtype)
        for i, r in enumerate(rows):
            r = r.tolist() if isinstance(r, ndarray) else list(r)
            if r and not isinstance(r[0], (int, float, bool)):
                raise ValueError("too many dimensions")
            if len(r) != n:
                raise missing("an array from rows of different lengths")
            out._set_row(i, _storable(r, dtype))
        return out
    if rows and isinstance(rows[0], ndarray):
        return from_nested([r.tolist() for r in rows], dtype)
    out = _empty((len(rows),), dtype)
    out._set_row(0, _storable(rows, dtype))
    return out


def _storable(values, dtype):
    """values as the dtype takes them: True and False as numbers, no float for an integer."""
    if dtype == dt.float:
        return [int(v) if type(v) is bool else v for v in values]
    if dtype != dt.float:
        for v in values:
            if isinstance(v, float):
                raise TypeError("can't convert float to int")
    return values


def array(obj, dtype=dt.float):
    """From a list or tuple (of numbers, or of rows), an iterable, or an ndarray (a copy)."""
    if isinstance(obj, ndarray):
        out = _empty(obj.shape, dtype)
        for i in range(obj._rows_count()):
            out._set_row(i, obj._row(i))
        return out
    if isinstance(obj, (int, _float)):
        raise TypeError("'%s' object isn't iterable" % type(obj).__name__)
    return from_nested(obj, dtype)


def _shape(shape):
    if isinstance(shape, int):
        return (shape,)
    if isinstance(shape, (tuple, list)):
        return tuple(shape)
    raise TypeError("input argument must be an integer or a tuple")


def empty(shape, dtype=dt.float):
    return _empty(_shape(shape), dtype)


def zeros(shape, dtype=dt.float):
    return _empty(_shape(shape), dtype)


def full(shape, fill_value, dtype=dt.float):
    out = _empty(_shape(shape), dtype)
    if dtype != dt.float and isinstance(fill_value, _float):
        raise TypeError("can't convert float to int")
    for i in range(out._rows_count()):
        out._set_row(i, [fill_value] * out.shape[-1])
    return out


def ones(shape, dtype=dt.float):
    return full(shape, 1, dtype)


def eye(N, *, M=None, k=0, dtype=dt.float):
    out = _empty((N, N if M is None else M), dtype)
    for i in range(N):
        if 0 <= i + k < out.shape[1]:
            out[i, i + k] = 1
    return out


def arange(*args, dtype=None):
    """arange(stop), arange(start, stop[, step]): int16 when every argument is an int and
    the values fit, float otherwise (as ulab)."""
    if not 1 <= len(args) <= 3:
        raise TypeError("wrong number of arguments")
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (args + (1,))[:3]
    n = (stop - start) / step  # ZeroDivisionError for a zero step, as ulab
    n = max(0, int(n) + (1 if n > int(n) else 0))
    values = [start + j * step for j in range(n)]
    if dtype is None:
        ints = all(isinstance(x, int) for x in (start, stop, step))
        fits = all(-32768 <= v < 32768 for v in values[:1] + values[-1:])
        dtype = dt.int16 if ints and fits else dt.float
    out = _empty((n,), dtype)
    out._set_row(0, values)
    return out


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=dt.float):
    if num < 2:
        raise ValueError("number of points must be at least 2")
    step = (stop - start) / (num - 1 if endpoint else num)
    out = _empty((num,), dtype)
    values = [start + j * step for j in range(num)]
    if endpoint:
        values[-1] = stop
    out._set_row(0, values)
    return (out, step) if retstep else out


def frombuffer(buffer, dtype=dt.float, count=-1, offset=0):
    """A 1-D array over `buffer`. A bytearray viewed as uint8 or bool, and an array.array("f")
    viewed as float, share its memory (the stand-in keeps items, not raw bytes); any other
    bytes-like object is read into a new array."""
    size = dt.ITEMSIZE[dtype]
    if dtype in (dt.uint8, dt.bool) and isinstance(buffer, bytearray):
        n = len(buffer) - offset
        return ndarray(buffer, (n if count < 0 else count,), dtype, offset)
    if dtype == dt.float and isinstance(buffer, _array.array) and len(buffer) \
            and isinstance(buffer[0], _float) and len(bytes(buffer)) == 4 * len(buffer):
        n = len(buffer) - offset // 4
        return ndarray(buffer, (n if count < 0 else count,), dtype, offset // 4)
    if not isinstance(buffer, (bytes, bytearray)):
        raise missing("frombuffer of a %s" % type(buffer).__name__)
    data = bytes(buffer)[offset:]
    if len(data) % size:
        raise ValueError("buffer size must be a multiple of element size")
    if count >= 0:
        data = data[:count * size]
    return ndarray(_array.array(dt.STORAGE[dtype], data), (len(data) // size,), dtype)


def concatenate(arrays, axis=0):
    """Arrays of one dtype and matching shapes joined along `axis`."""
    if not isinstance(arrays, tuple) or not all(isinstance(a, ndarray) for a in arrays):
        raise TypeError("first argument must be a tuple of ndarrays")
    first = arrays[0]
    if axis < 0:
        axis += len(first.shape)
    if not 0 <= axis < len(first.shape):
        raise ValueError("wrong axis specified")
    for a in arrays:
        if a._dtype != first._dtype or len(a.shape) != len(first.shape) or \
                any(a.shape[d] != first.shape[d] for d in range(len(a.shape)) if d != axis):
            raise ValueError("input arrays are not compatible")
    parts = [a if axis == 0 or len(a.shape) == 1 else a.transpose() for a in arrays]
    kind = dt.uint8 if first._dtype == dt.bool else first._dtype
    rows = []
    for a in parts:
        rows += a._row(0) if len(a.shape) == 1 else [a._row(i) for i in range(a.shape[0])]
    if len(first.shape) == 1:
        out = _empty((len(rows),), kind)
        out._set_row(0, rows)
        return out
    out = _empty((len(rows), len(rows[0])), kind)
    for i, r in enumerate(rows):
        out._set_row(i, r)
    return out.transpose().copy() if axis == 1 else out
