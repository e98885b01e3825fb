"""Definitions the device and the host share, loaded from the very files the board runs.

Modules of device/tinyattn written in plain Python (no `micropython`, no `ulab`) hold what the
host must reproduce bit for bit or speak alike: the Iris data and model config (iris.py), the
digits model (digits.py), the bench's plan (benchplan.py), the wire and file constants
(wire.py), the parameters of every layer kind (params.py), the fixed-point multipliers
(fixedpoint.py). `device_module(name)` executes one of them here, once, as mpremote builds both ends of
its commands from one table.
"""

import importlib.util
from functools import lru_cache

from .virtual.unixport import DEVICE_DIR


@lru_cache(maxsize=None)
def device_module(name):
    """device/tinyattn/<name>.py as a module of this process."""
    spec = importlib.util.spec_from_file_location("tinyattn_shared_" + name,
                                                  DEVICE_DIR / "tinyattn" / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
