"""The conformance cases' register, their shared inputs, and how a result is written down."""

import sys

from ulab import numpy as np

DIR = sys.argv[1] if len(sys.argv) > 1 else "."  # a folder for the file cases
CASES = []

A = [[1, -2.5, 3], [4, 5, -6]]
B = [[0.5, 1], [-1, 2], [3, 0.25]]
V = [3.0, -1.0, 2.0, 0.5]


def case(fn):
    """Register fn: its answer (or the type of its error) is one recorded result."""
    CASES.append(fn)
    return fn


def a():
    return np.array(A)


def u8():
    return np.array([1, 0, 2, 250], dtype=np.uint8)


def path(name):
    return DIR + "/" + name


NAMES = {np.float: "float32", np.uint8: "uint8", np.int8: "int8", np.uint16: "uint16",
         np.int16: "int16"}


def encode(x):
    """x as JSON: an array as its dtype's name and code, shape and items; a float as
    {"float": x} (non-finite ones as text); bytes as a list of ints."""
    if isinstance(x, np.ndarray):
        # the name as printed tells bool from uint8 (ulab prints an empty 2-D array's shape
        # to stdout, not into its repr: no repr of those)
        name = repr(x).rsplit("dtype=", 1)[1][:-1] if x.size else NAMES[x.dtype]
        return {"dtype": name, "code": x.dtype, "shape": list(x.shape),
                "data": encode(x.tolist())}
    if isinstance(x, (list, tuple)):
        items = [encode(v) for v in x]
        return items if isinstance(x, list) else {"tuple": items}
    if isinstance(x, (bytes, bytearray)):
        return {"bytes": list(x)}
    if isinstance(x, float):
        return {"float": x if x == x and x not in (float("inf"), float("-inf")) else repr(x)}
    return x
