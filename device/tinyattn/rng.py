"""A small seeded random generator (xorshift32): the same numbers on every port, and the
shuffles made with it. Plain Python: the host's reference runs this very file.

The 32-bit state is kept as two 16-bit halves, so a step works on small ints only: a
32-bit port boxes ints from 2^30 up on the heap, and a step leaves no garbage there.
"""

import array

_MASK = 0xFFFFFFFF
_TWO_32 = 4294967296.0
_unfilled = False  # set while a loader builds a model whose every parameter it then writes


class Unfilled:
    """`with Unfilled():` the layers built inside get zeros for their random weights (no
    float drawn, no garbage between the arrays); a loader then writes every parameter."""

    def __enter__(self):
        global _unfilled
        _unfilled = True

    def __exit__(self, *exc):
        global _unfilled
        _unfilled = False


class Rng:
    """xorshift32. `seed=None` takes a seed from the system's random source."""

    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, int):
            raise ValueError("seed must be an int or None, got %r" % (seed,))
        if seed is None:
            import random

            seed = random.getrandbits(30)
        self.set_state(((seed * 2654435761) + 0x9E3779B9) & _MASK or 0x9E3779B9)

    def state(self):
        """The 32-bit state, to give back to set_state() and replay the same numbers."""
        return (self.hi << 16) | self.lo

    def set_state(self, state):
        self.hi, self.lo = state >> 16, state & 0xFFFF

    def _step(self):
        """x ^= x << 13; x ^= x >> 17; x ^= x << 5 (mod 2^32) on the halves (hi, lo)."""
        hi, lo = self.hi, self.lo
        hi ^= ((hi << 13) | (lo >> 3)) & 0xFFFF
        lo ^= (lo << 13) & 0xFFFF
        lo ^= hi >> 1
        hi ^= ((hi << 5) | (lo >> 11)) & 0xFFFF
        lo ^= (lo << 5) & 0xFFFF
        self.hi, self.lo = hi, lo

    def next32(self):
        """The next 32-bit unsigned integer."""
        self._step()
        return (self.hi << 16) | self.lo

    def random(self):
        """A float in [0, 1): next32() / 2^32 (the halves joined without a big int)."""
        self._step()
        return (self.hi * 65536.0 + self.lo) / _TWO_32

    def uniform(self, low, high, count):
        """A list of `count` floats drawn uniformly from [low, high) (uniform_matrix makes
        arrays without such a list)."""
        out = [0.0] * count
        self._fill_uniform(out, low, high)
        return out

    def _fill_uniform(self, buf, low, high):
        """buf[j] = low + (high - low) * random(), for each j in order."""
        span = high - low
        for j in range(len(buf)):
            buf[j] = low + span * self.random()

    def fill_keep(self, keep, threshold):
        """keep[i] = 1 where random() >= p, else 0, for each byte of the bytearray `keep`;
        `threshold` = keep_threshold(p). No float is made."""
        t_hi, t_lo = threshold
        for i in range(len(keep)):
            self._step()
            hi = self.hi
            keep[i] = 1 if hi > t_hi or (hi == t_hi and self.lo >= t_lo) else 0

    def uniform_matrix(self, rows, cols, low, high):
        """A (rows, cols) ulab array from [low, high), drawn row by row into one float32 row
        buffer (no list of boxed floats); zeros inside `with Unfilled()`."""
        from ulab import numpy as np

        if _unfilled:
            return np.zeros((rows, cols))
        row = array.array("f", bytes(4 * cols))  # float32 values whatever the build's float
        wide = np.float != 102  # a float64 build: the row converted, not viewed
        view = None if wide else np.frombuffer(row, dtype=np.float).reshape((1, cols))
        out = np.zeros((rows, cols))
        for i in range(rows):
            self._fill_uniform(row, low, high)
            block = out[i:i + 1, :]
            block += np.array(row).reshape((1, cols)) if wide else view  # out is zero
        return out


def keep_threshold(p):
    """(hi, lo) halves of the smallest 32-bit x with x / 2^32 >= p in this port's floats, so
    that x >= it exactly when random() >= p would be."""
    low, high = 0, 1 << 32  # x / 2^32 >= p holds at high (p < 1), not below low
    while low < high:
        middle = (low + high) // 2
        if middle / _TWO_32 >= p:
            high = middle
        else:
            low = middle + 1
    return low >> 16, low & 0xFFFF


def permutation(n, rng):
    """The list 0..n-1 in a random order (Fisher-Yates, j = rng.next32() % (i + 1))."""
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.next32() % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order
