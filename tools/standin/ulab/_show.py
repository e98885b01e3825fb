"""How ulab prints an array: `array([[1.0, 2.0],\n       [3.0, 4.0]], dtype=float32)`, a
row longer than 10 items as its first 3, `...` and its last 3."""

import array as _array

from . import _dtypes as dt

_EDGE = 3
_THRESHOLD = 10


def show(a):
    name = dt.NAMES[a._dtype]
    if a.size == 0:
        if len(a.shape) == 1:
            return "array([], dtype=%s)" % name
        return "array([], shape=%r, dtype=%s)" % (a.shape, name)
    if len(a.shape) == 1:
        body = _row(a, a._row(0))
    else:
        body = "[" + ",\n       ".join(_row(a, a._row(i)) for i in range(a.shape[0])) + "]"
    return "array(%s, dtype=%s)" % (body, name)


def _row(a, values):
    if len(values) > _THRESHOLD:
        items = [_item(a, v) for v in values[:_EDGE]] + ["..."] + \
                [_item(a, v) for v in values[-_EDGE:]]
    else:
        items = [_item(a, v) for v in values]
    return "[" + ", ".join(items) + "]"


def _item(a, v):
    if a._dtype == dt.bool:
        return "True" if v else "False"
    if a._dtype != dt.float:
        return str(v)
    return _float32(v)


def _float32(v):
    """The shortest text that reads back as the same float32, in Python's float style."""
    if v != v or v in (float("inf"), float("-inf")):
        return repr(v)
    want = _array.array("f", [v])[0]
    for digits in range(1, 10):
        short = float("%.*g" % (digits, v))
        if _array.array("f", [short])[0] == want:
            return repr(short)
    return repr(v)
