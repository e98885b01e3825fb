"""Type, shape and finiteness checks shared by the layers: each raises ValueError naming what
is wrong (the constructor arguments' checks are in arguments.py)."""


def is_int(value):
    """An int, not a bool (True is an int in Python)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value):
    """An int or a float, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def require_2d(name, x, cols=None):
    """Check that x is a 2-D array (with `cols` columns when given); return its shape."""
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError("%s must be a 2-D ulab array, got shape %r" % (name, shape))
    if cols is not None and shape[1] != cols:
        raise ValueError("%s must have %d columns, got %d" % (name, cols, shape[1]))
    return shape


def require_float_rows(name, x, cols=None):
    """Check that x is a 2-D ulab float array of at least one row (and `cols` columns);
    return its shape."""
    from ulab import numpy as np

    rows, got = require_2d(name, x, cols)
    if x.dtype != np.float:
        raise ValueError("%s must be a float ulab array, got dtype %r" % (name, x.dtype))
    if rows < 1:
        raise ValueError("%s must have at least 1 row, got 0" % name)
    return rows, got


def require_rows(name, rows, per_sequence):
    """Check that `rows` splits into sequences of `per_sequence` tokens; return how many."""
    if not isinstance(per_sequence, int) or per_sequence < 1:
        raise ValueError("%s sequence length must be a positive int, got %r" % (name, per_sequence))
    if rows % per_sequence:
        raise ValueError("%s has %d rows, not a multiple of the sequence length %d"
                         % (name, rows, per_sequence))
    return rows // per_sequence


def finite(v):
    """Whether the number v is finite (NaN and infinity give NaN when v is taken from them)."""
    return v - v == 0


def all_finite(x):
    """Whether every number of the 1-D or 2-D ulab array x is finite (no NaN, no infinity).

    The sum is finite when every number is; only when it is not (NaN, infinity, or finite
    numbers whose sum overflows) are the rows looked at, each times 0 (NaN where not finite).
    """
    from ulab import numpy as np

    rows = [x] if len(x.shape) == 1 else x
    if finite(float(np.sum(x if len(x.shape) == 1 else np.sum(x, axis=1)))):
        return True
    for row in rows:
        if not float(np.sum(row * 0.0)) == 0.0:
            return False
    return True

