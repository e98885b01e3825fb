"""NumPy (float64) reference of the tinyattn layers, used to check the device's numbers."""

from .attention import attention_backward, attention_forward, padding_mask

__all__ = ["attention_forward", "attention_backward", "padding_mask"]
