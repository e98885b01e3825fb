"""A stand-in for the part of ulab.numpy that tinyattn uses, in plain MicroPython.

It is put on the path only when the interpreter has no real `ulab` (the unix port from
PyPI). Like a firmware build of ulab it stores float32 and has at most 2 dimensions.
Slices, `transpose()` and a dense `reshape()` are views sharing memory, as in ulab.
Arithmetic is done on Python floats and rounded to float32 on store. Work goes row by row,
so no long list of boxed floats stays alive (it would fragment the MicroPython heap).
Anything outside the subset raises, so a divergence from ulab shows up instead of hiding.
"""

import array as _array
import math

_sum = sum  # the builtins, before this module shadows their names as ulab does
_max = max
_float = float

# dtype codes, as in ulab (array.array typecodes)
float = 102  # 'f': float32
uint8 = 66  # 'B'; comparisons give arrays of 0/1 with this dtype, as in ulab
_STORAGE = {float: "f", uint8: "B"}
_NAMES = {float: "float32", uint8: "uint8"}


class ndarray:
    """A 1-D or 2-D array: a typed buffer, an offset, a shape and strides (in items)."""

    def __init__(self, buf, shape, dtype=float, offset=0, strides=None):
        self._buf = buf
        self.shape = shape
        self.dtype = dtype
        self._off = offset
        self._st = strides if strides is not None else _dense_strides(shape)

    @property
    def size(self):
        return self.shape[0] * (self.shape[1] if len(self.shape) == 2 else 1)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return 4 if self.dtype == float else 1

    def __len__(self):
        return self.shape[0]

    # ---- rows: the unit of all work -------------------------------------------------
    def _rows_count(self):
        return self.shape[0] if len(self.shape) == 2 else 1

    def _row(self, i):
        """Row i as a list (the whole array when 1-D)."""
        n = self.shape[-1]
        start = self._off + (i * self._st[0] if len(self.shape) == 2 else 0)
        step = self._st[-1]
        if step == 1:
            return list(self._buf[start:start + n])
        buf = self._buf
        return [buf[start + j * step] for j in range(n)]

    def _set_row(self, i, values):
        n = self.shape[-1]
        start = self._off + (i * self._st[0] if len(self.shape) == 2 else 0)
        step = self._st[-1]
        if self.dtype != float:  # C's round(), as ulab converts floats: half away from 0
            values = [int(v + 0.5) if v >= 0 else -int(0.5 - v) for v in values]
        if step == 1:
            self._buf[start:start + n] = _array.array(_STORAGE[self.dtype], values)
            return
        buf = self._buf
        for j in range(n):
            buf[start + j * step] = values[j]

    def _dense(self):
        return self._st == _dense_strides(self.shape)

    # ---- indexing ---------------------------------------------------------------------
    def _index(self, key):
        """A view for a key of ints and slices, or (None, position) for a full index."""
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > len(self.shape):
            raise IndexError("too many indices")
        off = self._off
        shape = []
        strides = []
        for axis in range(len(self.shape)):
            dim, st = self.shape[axis], self._st[axis]
            k = key[axis] if axis < len(key) else None
            if k is None:
                shape.append(dim)
                strides.append(st)
            elif isinstance(k, int):
                if k < 0:
                    k += dim
                if not 0 <= k < dim:
                    raise IndexError("index is out of bounds")
                off += k * st
            elif isinstance(k, slice):
                start, stop, step = k.indices(dim)
                n = _max(0, (stop - start + (step - (1 if step > 0 else -1))) // step)
                off += start * st
                shape.append(n)
                strides.append(st * step)
            else:
                raise TypeError("stand-in: only int and slice indices")
        if not shape:
            return None, off
        return ndarray(self._buf, tuple(shape), self.dtype, off, tuple(strides)), off

    def __getitem__(self, key):
        view, off = self._index(key)
        return self._buf[off] if view is None else view

    def __setitem__(self, key, value):
        view, off = self._index(key)
        if view is None:
            self._buf[off] = value
            return
        value = _as_array(value)
        _check_broadcast(value.shape, view.shape)
        for i in range(view._rows_count()):
            view._set_row(i, _broadcast_row(value, view.shape, i))

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    # ---- shape ------------------------------------------------------------------------
    def transpose(self):
        if len(self.shape) == 1:
            return self
        return ndarray(self._buf, (self.shape[1], self.shape[0]), self.dtype, self._off,
                       (self._st[1], self._st[0]))

    @property
    def T(self):
        return self.transpose()

    def reshape(self, shape):
        if not isinstance(shape, tuple):
            raise TypeError("shape must be a tuple")
        if len(shape) > 2:
            raise ValueError("maximum number of dimensions is 2")
        if shape[0] * (shape[1] if len(shape) == 2 else 1) != self.size:
            raise ValueError("cannot reshape array")
        source = self if self._dense() else self.copy()
        return ndarray(source._buf, shape, self.dtype, source._off)

    def copy(self):
        out = _empty(self.shape, self.dtype)
        for i in range(self._rows_count()):
            out._set_row(i, self._row(i))
        return out

    def flatten(self):
        return self.copy().reshape((self.size,))

    def tolist(self):
        if len(self.shape) == 1:
            return self._row(0)
        return [self._row(i) for i in range(self.shape[0])]

    def __repr__(self):
        return "array(%r, dtype=%s)" % (self.tolist(), _NAMES[self.dtype])

    # ---- arithmetic ---------------------------------------------------------------------
    def __add__(self, other):
        return _binary(self, other, 0)

    def __radd__(self, other):
        return _binary(self, other, 0)

    def __sub__(self, other):
        return _binary(self, other, 1)

    def __rsub__(self, other):
        return _binary(_as_array(other), self, 1)

    def __mul__(self, other):
        return _binary(self, other, 2)

    def __rmul__(self, other):
        return _binary(self, other, 2)

    def __truediv__(self, other):
        return _binary(self, other, 3)

    def __rtruediv__(self, other):
        return _binary(_as_array(other), self, 3)

    def __pow__(self, other):
        return _binary(self, other, 4)

    def __neg__(self):
        return _binary(self, -1.0, 2)

    def __gt__(self, other):
        return _binary(self, other, 6)

    def __lt__(self, other):
        return _binary(other, self, 6)

    def _inplace(self, other, op):
        other = _as_array(other)
        _check_broadcast(other.shape, self.shape)
        if self.dtype != float:
            raise TypeError("stand-in: in-place arithmetic on integer arrays")
        for i in range(self._rows_count()):
            self._set_row(i, _apply(op, self._row(i), _broadcast_row(other, self.shape, i)))
        return self

    def __iadd__(self, other):
        return self._inplace(other, 0)

    def __isub__(self, other):
        return self._inplace(other, 1)

    def __imul__(self, other):
        return self._inplace(other, 2)

    def __itruediv__(self, other):
        return self._inplace(other, 3)


# ---- construction --------------------------------------------------------------------------
def _dense_strides(shape):
    return (shape[1], 1) if len(shape) == 2 else (1,)


def _empty(shape, dtype=float):
    if len(shape) > 2:
        raise ValueError("maximum number of dimensions is 2")
    n = shape[0] * (shape[1] if len(shape) == 2 else 1)
    itemsize = 4 if dtype == float else 1
    return ndarray(_array.array(_STORAGE[dtype], bytes(n * itemsize)), tuple(shape), dtype)


def _as_array(x):
    if isinstance(x, ndarray):
        return x
    if isinstance(x, (int, _float)):
        return ndarray(_array.array("f", [x]), (1,))
    return array(x)


def array(obj, dtype=float):
    """ulab.numpy.array: from a list, a list of lists, or an ndarray."""
    if dtype not in _STORAGE:
        raise TypeError("stand-in: unsupported dtype")
    if isinstance(obj, ndarray):
        out = _empty(obj.shape, dtype)
        for i in range(obj._rows_count()):
            out._set_row(i, obj._row(i))
        return out
    rows = obj if isinstance(obj, list) else list(obj)
    if rows and isinstance(rows[0], (list, tuple, ndarray)):
        n = len(rows[0])
        out = _empty((len(rows), n), dtype)
        for i, r in enumerate(rows):
            r = r.tolist() if isinstance(r, ndarray) else list(r)
            if len(r) != n:
                raise ValueError("rows must have the same length")
            out._set_row(i, r)
        return out
    out = _empty((len(rows),), dtype)
    out._set_row(0, rows)
    return out


def frombuffer(buf, dtype=float):
    """A 1-D array over the memory of `buf` (no copy): a bytearray for uint8, an
    array.array("f") for float (the stand-in keeps its items, not raw bytes)."""
    if dtype == uint8 and isinstance(buf, bytearray):
        return ndarray(buf, (len(buf),), dtype)
    if dtype == float and isinstance(buf, _array.array) and len(buf) \
            and isinstance(buf[0], _float) and len(bytes(buf)) == 4 * len(buf):
        return ndarray(buf, (len(buf),), dtype)
    raise TypeError("stand-in: frombuffer takes a bytearray (uint8) or array.array('f') (float)")


def zeros(shape, dtype=float):
    if isinstance(shape, int):
        shape = (shape,)
    return _empty(shape, dtype)


# ---- broadcasting and elementwise work ----------------------------------------------------------
def _broadcast_shape(sa, sb):
    if len(sa) < len(sb):
        sa = (1,) * (len(sb) - len(sa)) + sa
    if len(sb) < len(sa):
        sb = (1,) * (len(sa) - len(sb)) + sb
    out = []
    for x, y in zip(sa, sb):
        if x != y and x != 1 and y != 1:
            raise ValueError("operands could not be broadcast together")
        out.append(x if y == 1 else y)
    return tuple(out)


def _check_broadcast(source, target):
    if _broadcast_shape(source, target) != target:
        raise ValueError("operands could not be broadcast together")


def _broadcast_row(x, shape, i):
    """Row i of x broadcast to `shape`."""
    r = x._row(i if x._rows_count() > 1 else 0)
    n = shape[-1]
    return r * n if len(r) == 1 and n != 1 else r


def _apply(op, x, y):
    if op == 0:
        return [p + q for p, q in zip(x, y)]
    if op == 1:
        return [p - q for p, q in zip(x, y)]
    if op == 2:
        return [p * q for p, q in zip(x, y)]
    if op == 3:
        return [p / q for p, q in zip(x, y)]
    if op == 4:
        return [p ** q for p, q in zip(x, y)]
    if op == 5:
        return [p if p >= q else q for p, q in zip(x, y)]
    return [p > q for p, q in zip(x, y)]


def _binary(a, b, op):
    a = _as_array(a)
    b = _as_array(b)
    if a.dtype != float and b.dtype != float and op != 6:
        raise TypeError("stand-in: integer array arithmetic is not supported")
    shape = _broadcast_shape(a.shape, b.shape)
    out = _empty(shape, uint8 if op == 6 else float)
    for i in range(out._rows_count()):
        out._set_row(i, _apply(op, _broadcast_row(a, shape, i), _broadcast_row(b, shape, i)))
    return out


def maximum(a, b):
    return _binary(a, b, 5)


def _unary(fn, a):
    a = _as_array(a)
    out = _empty(a.shape)
    for i in range(a._rows_count()):
        out._set_row(i, [fn(v) for v in a._row(i)])
    return out


def exp(a):
    return _unary(math.exp, a)


def sqrt(a):
    return _unary(math.sqrt, a)


def tanh(a):
    return _unary(math.tanh, a)


# ---- linear algebra and reductions ---------------------------------------------------------
def dot(a, b):
    """Matrix product of two 2-D arrays (any strides)."""
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise ValueError("stand-in: dot takes 2-D arrays")
    if a.shape[1] != b.shape[0]:
        raise ValueError("dimensions do not match")
    bt = b.transpose()
    cols = [_array.array("f", bt._row(j)) for j in range(bt.shape[0])]
    out = _empty((a.shape[0], b.shape[1]))
    for i in range(a.shape[0]):
        r = a._row(i)
        out._set_row(i, [_sum([x * y for x, y in zip(r, c)]) for c in cols])
    return out


def _reduce(a, axis, fn):
    if axis is None:
        return fn([fn(a._row(i)) for i in range(a._rows_count())])
    if len(a.shape) == 1:
        if axis not in (0, -1):
            raise ValueError("axis is out of bounds")
        return fn(a._row(0))
    rows = a.transpose() if axis == 0 else a
    out = _empty((rows.shape[0],))
    out._set_row(0, [fn(rows._row(i)) for i in range(rows.shape[0])])
    return out


def sum(a, axis=None):
    return _reduce(a, axis, _sum)


def max(a, axis=None):
    return _reduce(a, axis, _max)
