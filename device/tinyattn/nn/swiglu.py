"""SwiGLU feed-forward on ulab arrays: w2(silu(w1 x) * w3 x), Llama's."""

import math

from ulab import numpy as np

from .attention import add_product
from .checks import require_2d
from .layer import Layer
from ..rng import Rng


class SwiGLU(Layer):
    """SwiGLU(dim, hidden_dim, seed=None): y = (silu(x w1^T) * (x w3^T)) w2^T, silu(a) =
    a sigmoid(a); w1, w3 (hidden_dim, dim), w2 (dim, hidden_dim), no biases, Xavier-uniform
    from `seed`."""

    PARAMS = ("w1", "w2", "w3")

    def __init__(self, *args, seed=None, **named):
        self.dim, self.hidden_dim = self.arguments(args, named)
        E, F = self.dim, self.hidden_dim
        rng = Rng(seed)
        bound = math.sqrt(6.0 / (E + F))
        self.w1 = rng.uniform_matrix(F, E, -bound, bound)
        self.w2 = rng.uniform_matrix(E, F, -bound, bound)
        self.w3 = rng.uniform_matrix(F, E, -bound, bound)
        self.dw1 = self.dw2 = self.dw3 = None
        self.cache = None

    def forward(self, x, training=False):
        """x (rows, dim) to (rows, dim)."""
        require_2d("x", x, self.dim)
        a = np.dot(x, self.w1.transpose())
        b = np.dot(x, self.w3.transpose())
        s = (np.tanh(a * 0.5) + 1.0) * 0.5  # sigmoid(a), which cannot overflow
        h = a * s * b
        if training:
            self.cache = (x, a, b, s, h)
        return np.dot(h, self.w2.transpose())

    def backward(self, grad_out):
        """dw1, dw2, dw3 += their gradients; returns dx."""
        if self.cache is None:
            raise ValueError("backward() called before forward(x, training=True)")
        x, a, b, s, h = self.cache
        self.cache = None
        self.collect_params()
        add_product(self.dw2, grad_out, h)
        dh = np.dot(grad_out, self.w2)
        db = dh * a * s
        da = dh * b * s * (a * (1.0 - s) + 1.0)
        add_product(self.dw1, da, x)
        add_product(self.dw3, db, x)
        return np.dot(da, self.w1) + np.dot(db, self.w3)

    def clear_caches(self):
        self.cache = None
