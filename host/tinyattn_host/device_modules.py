"""Definitions the device and the host share, loaded from the very files the board runs.

Modules of device/tinyattn written in plain Python (no `micropython`, no `ulab`) hold what the
host must reproduce bit for bit or speak alike: the Iris data and model config
(datasets/iris.py), the digits model (datasets/digits.py), the bench's plan (bench/plan.py),
the wire and file constants (link/wire.py), every layer kind's declaration (nn/spec.py), the
fixed-point multipliers (int8/fixedpoint.py). `device_module(path)` imports one of them here,
once, as mpremote builds both ends of its commands from one table.
"""

import importlib
import sys
import types
from functools import lru_cache

from .locations import DEVICE_DIR

PACKAGE = "tinyattn_device"
"""The device package's name here. Its folders are packages whose __init__.py is not run (the
package's and the bench's need ulab); the plain modules import each other with relative
imports, as on the device."""


@lru_cache(maxsize=None)
def device_module(path):
    """device/tinyattn/<path>.py as a module of this process; path is relative to the package
    and names a plain module, e.g. "nn/spec" or "int8/fixedpoint"."""
    folder, name = DEVICE_DIR / "tinyattn", PACKAGE
    for part in [None] + path.split("/")[:-1]:
        if part is not None:
            folder, name = folder / part, name + "." + part
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [str(folder)]
            sys.modules[name] = package
    return importlib.import_module(PACKAGE + "." + path.replace("/", "."))
