"""ulab's ndarray in the stand-in: a typed buffer, an offset, a shape and strides (in items).

At most 2 dimensions, float32 storage, as a firmware build. Slices, `.T`/`transpose()` and a
dense `reshape()` are views sharing memory, as in ulab. Work goes row by row on Python
numbers, rounded to the dtype on store, so no long list of boxed floats stays alive (it would
fragment the MicroPython heap). Binary operators follow ulab's dtype rules (`_dtypes.result`).
"""

import array as _array

from . import _dtypes as dt

NOT_HERE = "not in the stand-in: use a firmware or unix port with ulab"


def missing(what):
    """The error for a part of ulab the stand-in does not have."""
    return NotImplementedError("%s is %s" % (what, NOT_HERE))


# attributes a real ulab ndarray has and the stand-in does not
_REAL_ONLY = ("byteswap", "flat", "imag", "real", "sort")

class ndarray:
    """A 1-D or 2-D array (see the module's docstring)."""

    def __init__(self, buf, shape, dtype=dt.float, offset=0, strides=None):
        self._buf = buf
        self.shape = shape
        self._dtype = dtype
        self._off = offset
        self._st = strides if strides is not None else dense_strides(shape)

    @property
    def dtype(self):
        return dt.uint8 if self._dtype == dt.bool else self._dtype

    @property
    def size(self):
        return self.shape[0] * (self.shape[1] if len(self.shape) == 2 else 1)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def itemsize(self):
        return dt.ITEMSIZE[self._dtype]

    @property
    def strides(self):
        return tuple(s * self.itemsize for s in self._st)

    def __getattr__(self, name):
        if name in _REAL_ONLY:
            raise AttributeError("ndarray.%s is %s" % (name, NOT_HERE))
        raise AttributeError("'ndarray' object has no attribute '%s'" % name)

    def __len__(self):
        return self.shape[0]

    # ---- rows: the unit of all work -------------------------------------------------
    def _rows_count(self):
        return self.shape[0] if len(self.shape) == 2 else 1

    def _row(self, i):
        """Row i as a list (the whole array when 1-D); bool items as 0 and 1."""
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
        if self._dtype != dt.float:
            values = dt.wrap(values, self._dtype)
        if step == 1:
            self._buf[start:start + n] = _array.array(dt.STORAGE[self._dtype], values)
            return
        buf = self._buf
        for j in range(n):
            buf[start + j * step] = values[j]

    def _item(self, v):
        return (v != 0) if self._dtype == dt.bool else v

    def _dense(self):
        return self._st == dense_strides(self.shape)

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
                n = max(0, (stop - start + (step - (1 if step > 0 else -1))) // step)
                off += start * st
                shape.append(n)
                strides.append(st * step)
            else:
                raise missing("an index of type %s" % type(k).__name__)
        if not shape:
            return None, off
        return ndarray(self._buf, tuple(shape), self._dtype, off, tuple(strides)), off

    def _mask(self, key):
        """The positions a 1-D Boolean index selects."""
        if key._dtype != dt.bool or len(key.shape) != 1 or len(self.shape) != 1:
            raise NotImplementedError("operation is implemented for 1D Boolean arrays only")
        if key.shape[0] != self.shape[0]:
            raise ValueError("array and index length must be equal")
        return [j for j, k in enumerate(key._row(0)) if k]

    def __getitem__(self, key):
        if isinstance(key, ndarray):
            row = self._row(0)
            picked = [row[j] for j in self._mask(key)]
            out = empty((len(picked),), self._dtype)
            out._set_row(0, picked)
            return out
        view, off = self._index(key)
        return self._item(self._buf[off]) if view is None else view

    def __setitem__(self, key, value):
        if isinstance(key, ndarray):
            picked = self._mask(key)
            values = as_array(value)._row(0)
            if len(values) == 1:
                values = values * len(picked)
            values = dt.wrap(values, self._dtype)
            start, step = self._off, self._st[0]
            for j, v in zip(picked, values):
                self._buf[start + j * step] = v
            return
        view, off = self._index(key)
        if view is None:
            self._buf[off] = dt.wrap([value], self._dtype)[0]
            return
        value = as_array(value)
        if len(value.shape) == 2 and value.shape[0] == 1 and len(view.shape) == 1:
            value = value[0]  # a (1, n) row into n places, as ulab takes it
        check_broadcast(value.shape, view.shape)
        for i in range(view._rows_count()):
            view._set_row(i, broadcast_row(value, view.shape, i))

    def __iter__(self):
        for i in range(self.shape[0]):
            yield self[i]

    # ---- shape ------------------------------------------------------------------------
    def transpose(self):
        if len(self.shape) == 1:
            return self
        return ndarray(self._buf, (self.shape[1], self.shape[0]), self._dtype, self._off,
                       (self._st[1], self._st[0]))

    @property
    def T(self):
        return self.transpose()

    def reshape(self, shape):
        if isinstance(shape, int):
            shape = (shape,)
        if not isinstance(shape, tuple):
            raise TypeError("shape must be integer or tuple of integers")
        if len(shape) > 2:
            raise ValueError("maximum number of dimensions is 2")
        if -1 in shape:
            if shape.count(-1) > 1:
                raise ValueError("can only specify one unknown dimension")
            known = 1
            for n in shape:
                known *= 1 if n == -1 else n
            shape = tuple(self.size // known if n == -1 else n for n in shape)
        if shape[0] * (shape[1] if len(shape) == 2 else 1) != self.size:
            raise ValueError("cannot reshape array")
        source = self if self._dense() else self.copy()
        return ndarray(source._buf, shape, self._dtype, source._off)

    def copy(self):
        out = empty(self.shape, self._dtype)
        for i in range(self._rows_count()):
            out._set_row(i, self._row(i))
        return out

    def flatten(self, order="C"):
        if order not in ("C", "F"):
            raise ValueError("flattening order must be either 'C', or 'F'")
        source = self.transpose() if order == "F" else self
        return source.copy().reshape((self.size,))

    def tolist(self):
        if len(self.shape) == 1:
            return [self._item(v) for v in self._row(0)]
        return [[self._item(v) for v in self._row(i)] for i in range(self.shape[0])]

    def tobytes(self):
        if not self._dense():
            raise ValueError("tobytes can be invoked for dense arrays only")
        return bytearray(self._buf[self._off:self._off + self.size])

    def __repr__(self):
        from ._show import show
        return show(self)

    # ---- arithmetic (ulab's dtype rules) -----------------------------------------------
    def __add__(self, other):
        return binary(self, other, ADD)

    def __radd__(self, other):
        return binary(other, self, ADD)

    def __sub__(self, other):
        return binary(self, other, SUB)

    def __rsub__(self, other):
        return binary(other, self, SUB)

    def __mul__(self, other):
        return binary(self, other, MUL)

    def __rmul__(self, other):
        return binary(other, self, MUL)

    def __truediv__(self, other):
        return binary(self, other, DIV)

    def __rtruediv__(self, other):
        return binary(other, self, DIV)

    def __pow__(self, other):
        return binary(self, other, POW)

    def __rpow__(self, other):
        return binary(other, self, POW)

    def __lt__(self, other):
        return binary(self, other, LT)

    def __le__(self, other):
        return binary(self, other, LE)

    def __gt__(self, other):
        return binary(self, other, GT)

    def __ge__(self, other):
        return binary(self, other, GE)

    def __eq__(self, other):
        return binary(self, other, EQ)

    def __ne__(self, other):
        return binary(self, other, NE)

    def __neg__(self):
        if self._dtype == dt.bool:
            return self.copy()
        return unary(self, lambda v: -v, self._dtype)

    def __abs__(self):
        return unary(self, abs, self._dtype)

    def __floordiv__(self, other):
        raise missing("the operator //")

    def __mod__(self, other):
        raise missing("the operator %")

    def __invert__(self):
        raise missing("the operator ~")

    def _inplace(self, other, op):
        other = as_array(other)
        check_broadcast(other.shape, self.shape)
        if result_dtype(self, other, op) != self._dtype:
            raise TypeError("cannot cast output with casting rule")
        for i in range(self._rows_count()):
            self._set_row(i, apply(op, self._row(i), broadcast_row(other, self.shape, i)))
        return self

    def __iadd__(self, other):
        return self._inplace(other, ADD)

    def __isub__(self, other):
        return self._inplace(other, SUB)

    def __imul__(self, other):
        return self._inplace(other, MUL)

    def __itruediv__(self, other):
        return self._inplace(other, DIV)

    def __ipow__(self, other):
        return self._inplace(other, POW)


# ---- construction ------------------------------------------------------------------------
def dense_strides(shape):
    return (shape[1], 1) if len(shape) == 2 else (1,)


def empty(shape, dtype=dt.float):
    """A zeroed array of `shape` (a tuple)."""
    if len(shape) > 2:
        raise TypeError("too many dimensions")
    n = shape[0] * (shape[1] if len(shape) == 2 else 1)
    if n < 0:
        raise ValueError("ndarray length overflows")
    return ndarray(_array.array(dt.STORAGE[dtype], bytes(n * dt.ITEMSIZE[dtype])),
                   tuple(shape), dtype)


def as_array(x, like=None):
    """x as an array: a Python number gets ulab's dtype for a scalar beside an array of dtype
    `like` (`_dtypes.of_scalar`)."""
    if isinstance(x, ndarray):
        return x
    if isinstance(x, (int, float, bool)):
        d = dt.of_scalar(x, like)
        return ndarray(_array.array(dt.STORAGE[d], [x]), (1,), d)
    return from_nested(x)


# imported last, as they build on ndarray, empty and as_array: arrays from lists, and the
# operators' engine
from ._create import from_nested  # noqa: E402
from ._broadcast import (ADD, DIV, EQ, GE, GT, LE, LT, MUL, NE, POW, SUB, apply,  # noqa: E402
                         binary, broadcast_row, check_broadcast, result_dtype, unary)
