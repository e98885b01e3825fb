"""Element-wise work on arrays: broadcasting, the operators, and ulab's dtype of a result
(`_dtypes.result`), row by row."""

from . import _dtypes as dt
from ._array import as_array, empty, missing, ndarray

ADD, SUB, MUL, DIV, POW, MAX, MIN, LT, LE, GT, GE, EQ, NE = range(13)

def broadcast_shape(sa, sb):
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


def check_broadcast(source, target):
    if broadcast_shape(source, target) != target:
        raise ValueError("operands could not be broadcast together")


def broadcast_row(x, shape, i):
    """Row i of x broadcast to `shape`."""
    r = x._row(i if x._rows_count() > 1 else 0)
    n = shape[-1]
    return r * n if len(r) == 1 and n != 1 else r


def apply(op, x, y):
    """The element-wise `op` of two equally long lists."""
    if op == ADD:
        return [p + q for p, q in zip(x, y)]
    if op == SUB:
        return [p - q for p, q in zip(x, y)]
    if op == MUL:
        return [p * q for p, q in zip(x, y)]
    if op == DIV:
        return [_divide(p, q) for p, q in zip(x, y)]
    if op == POW:
        return [p ** q for p, q in zip(x, y)]
    if op == MAX:
        return [p if p >= q else q for p, q in zip(x, y)]
    if op == MIN:
        return [p if p <= q else q for p, q in zip(x, y)]
    if op == LT:
        return [p < q for p, q in zip(x, y)]
    if op == LE:
        return [p <= q for p, q in zip(x, y)]
    if op == GT:
        return [p > q for p, q in zip(x, y)]
    if op == GE:
        return [p >= q for p, q in zip(x, y)]
    if op == EQ:
        return [p == q for p, q in zip(x, y)]
    return [p != q for p, q in zip(x, y)]


def _divide(p, q):
    """IEEE division, as ulab's float32: x/0 is inf or nan, not an exception."""
    if q:
        return p / q
    if p != p or not p:
        return float("nan")
    return float("inf") if (p > 0) == (str(float(q))[0] != "-") else float("-inf")


def result_dtype(a, b, op):
    if op >= LT:
        return dt.bool
    if op in (DIV, POW):
        if op == DIV and a._dtype != dt.float and b._dtype != dt.float:
            raise missing("true division of two integer operands (ulab truncates it)")
        return dt.float
    return dt.result(a._dtype, b._dtype)


def binary(a, b, op):
    """a op b, broadcast, in ulab's result dtype."""
    a = as_array(a, b.dtype if isinstance(b, ndarray) else None)
    b = as_array(b, a.dtype)
    shape = broadcast_shape(a.shape, b.shape)
    out = empty(shape, result_dtype(a, b, op))
    for i in range(out._rows_count()):
        out._set_row(i, apply(op, broadcast_row(a, shape, i), broadcast_row(b, shape, i)))
    return out


def unary(a, fn, dtype=dt.float):
    """fn of every element of a (any sequence), in `dtype`."""
    a = as_array(a)
    out = empty(a.shape, dtype)
    for i in range(a._rows_count()):
        out._set_row(i, [fn(v) for v in a._row(i)])
    return out
