"""NumPy (float64) reference of the tinyattn layers, used to check the device's numbers."""

from .attention import attention_backward, attention_forward, padding_mask
from .layers import cross_entropy
from .sequential import sequential_backward, sequential_forward
from . import int8  # noqa: E402,F401  (the int8 path, bit for bit)

__all__ = ["attention_forward", "attention_backward", "padding_mask",
           "cross_entropy", "sequential_forward", "sequential_backward"]
