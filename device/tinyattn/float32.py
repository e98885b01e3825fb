"""ulab float arrays as float32 bytes and back, a row or a piece at a time: the arrays of the
model file (store.py) and of the link's records (link/records.py). A large array is never
copied whole, and the bytes are float32 whatever the build's float."""

import array

from ulab import numpy as np


def rows(value):
    """The float32 bytes of a 1-D or 2-D ulab array, as one array('f') per row."""
    if len(value.shape) == 1:
        yield array.array("f", value.tolist())
        return
    for row in value:
        yield array.array("f", row.tolist())


def from_bytes(shape, read):
    """A ulab array of a 1-D or 2-D `shape` from float32 bytes; read(n) gives the next n."""
    if len(shape) == 1:
        return np.array(array.array("f", read(4 * shape[0])))
    value = np.zeros(shape)
    for i in range(shape[0]):
        value[i, :] = np.array(array.array("f", read(4 * shape[1])))
    return value


CHUNK = 64
"""read_into's piece: at most this many floats are decoded at a time."""


def read_into(value, read):
    """Fill a 1-D or 2-D ulab array in place from float32 bytes, CHUNK floats at a time;
    read(n) gives the next n (a file's read: the loader's one copy)."""
    if len(value.shape) == 1:
        for j in range(0, value.shape[0], CHUNK):
            k = min(CHUNK, value.shape[0] - j)
            value[j:j + k] = np.array(array.array("f", read(4 * k)))
        return
    rows, cols = value.shape
    for i in range(rows):
        for j in range(0, cols, CHUNK):
            k = min(CHUNK, cols - j)
            value[i, j:j + k] = np.array(array.array("f", read(4 * k)))
