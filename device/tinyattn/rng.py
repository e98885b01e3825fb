"""A small seeded random generator (xorshift32): the same numbers on every port."""

_MASK = 0xFFFFFFFF


class Rng:
    """xorshift32. `seed=None` takes a seed from the system's random source."""

    def __init__(self, seed=None):
        if seed is not None and not isinstance(seed, int):
            raise ValueError("seed must be an int or None, got %r" % (seed,))
        if seed is None:
            import random

            seed = random.getrandbits(30)
        self.state = ((seed * 2654435761) + 0x9E3779B9) & _MASK or 0x9E3779B9

    def next32(self):
        """The next 32-bit unsigned integer."""
        x = self.state
        x ^= (x << 13) & _MASK
        x ^= x >> 17
        x ^= (x << 5) & _MASK
        self.state = x
        return x

    def random(self):
        """A float in [0, 1)."""
        return self.next32() / 4294967296.0

    def uniform(self, low, high, count):
        """A list of `count` floats drawn uniformly from [low, high)."""
        span = high - low
        return [low + span * self.random() for _ in range(count)]

    def uniform_matrix(self, rows, cols, low, high):
        """A (rows, cols) ulab array from [low, high), drawn row by row: a long list of
        boxed floats would take several times the array's bytes from the heap."""
        from ulab import numpy as np

        out = np.zeros((rows, cols))
        for i in range(rows):
            out[i, :] = np.array(self.uniform(low, high, cols))
        return out
