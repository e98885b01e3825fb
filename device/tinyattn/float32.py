"""ulab float arrays as float32 bytes and back, a row at a time: the arrays of the model file
(store.py) and of the link's records (link/records.py). A row at a time, so a large array is
never copied whole, and in float32 whatever the build's float."""

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
