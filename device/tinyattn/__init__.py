"""tinyattn: multi-head self-attention that trains and runs on MicroPython with ulab."""

__version__ = "0.1.0"

from .attention import Attention, padding_mask  # noqa: E402,F401
