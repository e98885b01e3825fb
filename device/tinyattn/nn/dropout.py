"""Inverted dropout on ulab arrays (PyTorch's nn.Dropout), with its keep mask kept for backward."""

from ulab import numpy as np

from ..rng import Rng, keep_threshold
from .layer import Layer
from .arguments import fraction


class Dropout(Layer):
    """In training each element is kept with probability 1 - p and scaled by 1 / (1 - p),
    else 0; outside training (and with p = 0) the identity. The keep decisions come from
    Rng(seed), one byte an element in row-major order, a fresh draw every training forward
    (Rng.fill_keep: no float is made); the mask's byte buffer is reused while the shape is."""

    def __init__(self, p, seed=None):
        self.p = fraction("p", p)
        self._rng = Rng(seed)
        self._threshold = keep_threshold(p) if p else None
        self._scale = 1.0 / (1.0 - p)
        self._buf = self._view = None
        self._used = False  # the last forward applied the mask

    def forward(self, x, training=False):
        """x, or x * keep / (1 - p) with a new keep mask when training and p > 0."""
        self._used = bool(training) and self.p > 0.0
        if not self._used:
            return x
        shape = x.shape
        if self._view is None or self._view.shape != shape:
            self._view = self._buf = None
            self._buf = bytearray(shape[0] * shape[1])
            self._view = np.frombuffer(self._buf, dtype=np.uint8).reshape(shape)
        self._rng.fill_keep(self._buf, self._threshold)
        y = x * self._view
        y *= self._scale
        return y

    def backward(self, grad_out):
        """grad_out through the last forward's mask (and scale), or grad_out itself."""
        if not self._used:
            return grad_out
        d = grad_out * self._view
        d *= self._scale
        return d

    def keep_mask(self):
        """The 0/1 keep mask of the last training forward (a float copy), or None."""
        return np.zeros(self._view.shape) + self._view if self._used else None
