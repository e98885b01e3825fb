"""Shape checks shared by the layers: each raises ValueError naming what is wrong."""


def require_2d(name, x, cols=None):
    """Check that x is a 2-D array (with `cols` columns when given); return its shape."""
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) != 2:
        raise ValueError("%s must be a 2-D ulab array, got shape %r" % (name, shape))
    if cols is not None and shape[1] != cols:
        raise ValueError("%s must have %d columns, got %d" % (name, cols, shape[1]))
    return shape


def require_rows(name, rows, per_sequence):
    """Check that `rows` splits into sequences of `per_sequence` tokens; return how many."""
    if not isinstance(per_sequence, int) or per_sequence < 1:
        raise ValueError("%s sequence length must be a positive int, got %r" % (name, per_sequence))
    if rows % per_sequence:
        raise ValueError("%s has %d rows, not a multiple of the sequence length %d"
                         % (name, rows, per_sequence))
    return rows // per_sequence


def all_finite(x):
    """Whether every number of the 1-D or 2-D ulab array x is finite (no NaN, no infinity)."""
    from ulab import numpy as np

    z = x * 0.0  # NaN where x is NaN or infinite, else 0
    if len(x.shape) == 2:
        z = np.sum(z, axis=1)
    return float(np.sum(z)) == 0.0
