"""GELU in its exact (erf) form, PyTorch's default: gelu(x) = x Phi(x).

ulab has no erf, so Phi comes from Abramowitz and Stegun 7.1.26 (|error of erf| <= 1.5e-7):
with z = |x| / sqrt(2) and t = 1 / (1 + p z), the lower tail is
q = Phi(-|x|) = 0.5 (a1 t + ... + a5 t^5) exp(-z^2), and Phi(x) = q for x < 0, 1 - q else
(no cancellation in the negative tail). Activation('gelu_tanh') in layers.py is the tanh form.
"""

import math

from ulab import numpy as np

from .layer import Layer
from .checks import require_2d

_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def normal_cdf(x):
    """Phi(x), the standard normal distribution function, elementwise (2-D x)."""
    negative = x < 0.0
    sign = 1.0 - 2.0 * negative  # -1 where x < 0
    z = x * sign * _INV_SQRT2
    t = 1.0 / (1.0 + _P * z)
    poly = _A[4]
    for a in (_A[3], _A[2], _A[1], _A[0]):
        poly = poly * t + a
    q = poly * t * np.exp(-(z * z)) * 0.5
    return (1.0 - negative) - q * sign  # q below 0, 1 - q above


class Gelu(Layer):
    """Gelu(): elementwise x Phi(x); backward multiplies by Phi(x) + x phi(x)."""

    def __init__(self, *args, **named):
        self.arguments(args, named)
        self.x_cache = self.cdf_cache = None

    def forward(self, x, training=False):
        """gelu of every element of x (any 2-D shape)."""
        require_2d("x", x)
        cdf = normal_cdf(x)
        if training:  # backward needs both
            self.x_cache, self.cdf_cache = x, cdf
        return x * cdf

    def backward(self, grad_out):
        """grad_out (Phi(x) + x phi(x)), phi(x) = exp(-x^2 / 2) / sqrt(2 pi)."""
        x = self.x_cache
        if x is None:
            raise ValueError("backward() called before forward(x, training=True)")
        shape = getattr(grad_out, "shape", None)
        if shape != x.shape:
            raise ValueError("grad_out must have shape %r, got %r" % (x.shape, shape))
        density = np.exp(x * x * -0.5) * _INV_SQRT_2PI
        return grad_out * (self.cdf_cache + x * density)

    def clear_caches(self):
        """Drop what the last forward kept for backward."""
        self.x_cache = self.cdf_cache = None
