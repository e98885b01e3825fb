"""Definitions the device and the host share, loaded from the very files the board runs.

Modules of device/tinyattn written in plain Python (no `micropython`, no `ulab`) hold what the
host must reproduce bit for bit or speak alike: the Iris data and model config
(datasets/iris.py), the digits model (datasets/digits.py), the bench's plan (bench/plan.py),
the wire and file constants (link/wire.py), the parameters of every layer kind (nn/spec.py),
the fixed-point multipliers (int8/fixedpoint.py). `device_module(path)` executes one of them
here, once, as mpremote builds both ends of its commands from one table.
"""

import importlib.util
from functools import lru_cache

from .virtual.unixport import DEVICE_DIR


@lru_cache(maxsize=None)
def device_module(path):
    """device/tinyattn/<path>.py as a module of this process; path is relative to the package
    and names a plain module, e.g. "nn/spec" or "int8/fixedpoint"."""
    spec = importlib.util.spec_from_file_location("tinyattn_shared_" + path.replace("/", "_"),
                                                  DEVICE_DIR / "tinyattn" / (path + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
