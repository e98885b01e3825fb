"""Host side of tinyattn: the NumPy reference, the serial harness and the tools around them."""

__version__ = "0.1.0"
