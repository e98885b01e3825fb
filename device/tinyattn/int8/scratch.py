"""Scratch buffers that layers run one after another share (a model's encoder layers).

A QSequential gives its layers one Scratch (`share_scratch`); a part of a layer then asks it,
by name, for each buffer it writes and that only the same layer's run reads again: parts
asking the same name for the same size get the same buffer, so N encoder layers hold one
layer's scratch, not N. What the next layer reads (a layer's output) is never scratch. A lone
layer, or a part given no scratch, makes its own buffers.
"""

import array


class Scratch:
    """name -> the buffer the last part asking for that name and size got (a bytearray: the
    kernels read int8 and offset binary bytes alike, and nothing reads it as numbers)."""

    def __init__(self):
        self.buffers = {}

    def get(self, name, n):
        """The buffer of n bytes named `name` (a new one when the size differs)."""
        buf = self.buffers.get(name)
        if buf is None or len(buf) != n:
            buf = self.buffers[name] = bytearray(n)
        return buf


def signed(buf):
    """An int8 buffer as numbers: a shared bytearray's bytes as a new array('b'), an
    array('b') itself (for a caller that reads values: intermediates, traces)."""
    return array.array("b", buf) if isinstance(buf, bytearray) else buf


def int8_buffer(scratch, name, n):
    """n int8 items: scratch = (Scratch, the part's prefix) shares them, None makes them."""
    if scratch is None:
        return array.array("b", bytes(n))
    return scratch[0].get(scratch[1] + name, n)
