"""RMSNorm on ulab arrays: each token (row) divided by its root mean square, then scaled."""

from ulab import numpy as np

from .checks import require_2d
from .layer import Layer


class RMSNorm(Layer):
    """RMSNorm(dim, eps=1e-5): y = gamma * x / sqrt(mean(x^2) + eps), each row (Llama's,
    llama2.c's rmsnorm). gamma (dim,) starts at 1."""

    PARAMS = ("gamma",)

    def __init__(self, *args, **named):
        self.dim, self.eps = self.arguments(args, named)
        self.gamma = np.zeros(self.dim) + 1.0
        self.dgamma = None  # made on first need (layer.py)
        self.xhat_cache = self.inv_cache = None

    def forward(self, x, training=False):
        """x (rows, dim) to (rows, dim)."""
        rows, E = require_2d("x", x, self.dim)
        inv = 1.0 / np.sqrt(np.sum(x * x, axis=1).reshape((rows, 1)) * (1.0 / E) + self.eps)
        xhat = x * inv
        if training:
            self.xhat_cache, self.inv_cache = xhat, inv
        return xhat * self.gamma

    def backward(self, grad_out):
        """dgamma += sum(grad_out xhat) over rows; returns dx = inv (d - xhat mean(d xhat)),
        d = grad_out gamma."""
        xhat, inv = self.xhat_cache, self.inv_cache
        if xhat is None:
            raise ValueError("backward() called before forward(x, training=True)")
        rows, E = xhat.shape
        if getattr(grad_out, "shape", None) != (rows, E):
            raise ValueError("grad_out must have shape %r, got %r"
                             % ((rows, E), getattr(grad_out, "shape", None)))
        self.collect_params()
        self.dgamma += np.sum(grad_out * xhat, axis=0)
        d = grad_out * self.gamma
        return (d - xhat * (np.sum(d * xhat, axis=1).reshape((rows, 1)) * (1.0 / E))) * inv

    def clear_caches(self):
        self.xhat_cache = self.inv_cache = None
