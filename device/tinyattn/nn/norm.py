"""LayerNorm on ulab arrays: each token (row) normalised, then scaled and shifted."""

from ulab import numpy as np

from .layer import Layer
from .checks import require_2d


class LayerNorm(Layer):
    """LayerNorm(normalized_shape, eps=1e-5): y = gamma * (x - mean) / sqrt(var + eps) + beta,
    mean and (biased) var over each row.

    gamma starts at 1, beta at 0, both (E,), as in PyTorch's nn.LayerNorm(E, eps).
    """

    PARAMS = ("gamma", "beta")

    def __init__(self, *args, **named):
        normalized_shape, eps = self.arguments(args, named)
        E = normalized_shape
        self.normalized_shape = E
        self.eps = eps
        self.gamma = np.zeros(E) + 1.0
        self.beta = np.zeros(E)
        self.dgamma = self.dbeta = None  # made on first need (layer.py)
        self.xhat_cache = self.inv_cache = None

    def forward(self, x, training=False):
        """x (rows, E) to (rows, E)."""
        self.grads_first(training)
        rows, E = require_2d("x", x, self.normalized_shape)
        mean = np.sum(x, axis=1).reshape((rows, 1)) * (1.0 / E)
        centred = x - mean
        var = np.sum(centred * centred, axis=1).reshape((rows, 1)) * (1.0 / E)
        inv = 1.0 / np.sqrt(var + self.eps)
        xhat = centred * inv
        if training:  # backward needs both
            self.xhat_cache, self.inv_cache = xhat, inv
        return xhat * self.gamma + self.beta

    def backward(self, grad_out):
        """dgamma += sum(grad_out xhat), dbeta += sum(grad_out) over rows; returns dx:
        inv * (d - mean(d) - xhat * mean(d xhat)) with d = grad_out * gamma, means per row."""
        xhat, inv = self.xhat_cache, self.inv_cache
        if xhat is None:
            raise ValueError("backward() called before forward(x, training=True)")
        rows, E = xhat.shape
        shape = getattr(grad_out, "shape", None)
        if shape != (rows, E):
            raise ValueError("grad_out must have shape %r, got %r" % ((rows, E), shape))
        self.collect_params()  # the gradient buffers, made the first time
        self.dgamma += np.sum(grad_out * xhat, axis=0)
        self.dbeta += np.sum(grad_out, axis=0)
        d = grad_out * self.gamma
        d_mean = np.sum(d, axis=1).reshape((rows, 1)) * (1.0 / E)
        dx_mean = np.sum(d * xhat, axis=1).reshape((rows, 1)) * (1.0 / E)
        return (d - d_mean - xhat * dx_mean) * inv

    def clear_caches(self):
        """Drop what the last forward kept for backward."""
        self.xhat_cache = self.inv_cache = None
