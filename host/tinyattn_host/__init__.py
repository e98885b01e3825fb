"""Host side of tinyattn: the NumPy reference, the serial harness and the tools around them."""

from .locations import package_version

__version__ = package_version()  # device/tinyattn/__init__.py's: one definition
