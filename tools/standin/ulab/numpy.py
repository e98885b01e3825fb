"""A stand-in for ulab.numpy, in plain MicroPython, for interpreters without ulab (the unix
port from PyPI): the part of ulab's numpy that its documentation and tinyattn use, on arrays
of at most 2 dimensions stored as float32 (as a firmware build), with ulab's behaviour (not
NumPy's) where the two differ: `tests/fixtures/standin_conformance.json` holds a real ulab's
answers and tests/device/test_standin_conformance.py compares.

The parts: `_array` (ndarray: storage, views, indexing), `_broadcast` (operators and ulab's
result dtypes), `_create`, `_math` (element-wise), `_reduce` (reductions, dot), `_files`
(.npy and text), `_show` (printing), `_dtypes`. A name real ulab has and the stand-in has not
raises AttributeError, an option or an operator it lacks NotImplementedError, each saying
"not in the stand-in: use a firmware or unix port with ulab".
"""

from ._array import NOT_HERE, ndarray  # noqa: F401
from ._create import (arange, array, concatenate, empty, eye, frombuffer, full,  # noqa: F401
                      linspace, ones, zeros)
from ._dtypes import bool, float, int8, int16, uint8, uint16  # noqa: F401
from ._math import (around, clip, cos, exp, floor, log, maximum, minimum, sin,  # noqa: F401
                    sqrt, tanh, where)
from ._reduce import argmax, argmin, dot, max, mean, median, min, std, sum  # noqa: F401

# the rest of real ulab 6.12's numpy (dir() of it, on a unix port with ULAB_MAX_DIMS=2): one
# string, not a list of 70 (the heap)
REAL_ONLY = (
    " acos acosh all any arctan2 argsort asarray asin asinh atan atanh bincount bitwise_and"
    " bitwise_or bitwise_xor ceil complex compress conjugate convolve cosh cross degrees delete"
    " diag diff e equal expm1 fft flip get_printoptions imag inf interp isfinite isinf"
    " left_shift linalg log10 log2 logspace meshgrid nan ndinfo nonzero not_equal pi polyfit"
    " polyval radians random real right_shift roll set_printoptions sinc sinh size sort"
    " sort_complex take tan trace trapz vectorize ")

# the files' part is imported on first use (the heap of a program that reads no file)
_FILES = ("load", "loadtxt", "save", "savetxt")


def __getattr__(name):
    if name in _FILES:
        from . import _files

        value = getattr(_files, name)
        globals()[name] = value
        return value
    if " %s " % name in REAL_ONLY:
        raise AttributeError("np.%s is %s" % (name, NOT_HERE))
    raise AttributeError("module 'numpy' has no attribute '%s'" % name)
