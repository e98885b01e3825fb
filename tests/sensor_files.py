"""Issue 34's sensor model as files, for the heap tests (tests/board/scripts/sensor_model.py
makes them on the unix port: seed 34, int8 from 64 random rows), with the package compiled as
`make deploy` ships it. Until the repository has a PyTorch fixture of it, random weights:
a heap figure does not depend on the values."""

import os
from pathlib import Path

from board_cases import BOARD_DIR
from tinyattn_host.bench.bench import compiled_package
from tinyattn_host.virtual import unixport

SCRIPT = BOARD_DIR / "scripts" / "sensor_model.py"
SEQ_LEN, FEATURES = 20, 6


def sensor_files(folder, int8=True):
    """(package folder for MICROPYPATH, float model file, int8 model file or None) in
    `folder` (int8 False: the float one only, which the stand-in makes in seconds)."""
    lib = folder / "lib"
    compiled_package(unixport.interpreter(), lib)
    files = folder / "sensor.bin", folder / "sensor-int8.bin" if int8 else None
    unixport.run_file(SCRIPT, heap="8m", device_dir=lib,
                      args=("--save",) + tuple(str(f) for f in files if f is not None))
    return (lib,) + files


def held(lib, path, kind, what, heap):
    """The bytes held after loading `path` (kind float or int8) and, for what = "run",
    running one sample, at -X heapsize=heap; MicroPythonError when it does not fit.

    Run as on a board, whose package lies in /lib: in the folder holding `lib`, the package
    found as "lib" and the file by its path from there. MicroPython interns each imported
    module's file name (its __file__), so a package under a long temporary path would hold
    ~2 KB more of names than a board does."""
    folder = lib.parent
    out = unixport.run_file(SCRIPT, heap=heap, args=(os.path.relpath(path, folder), kind, what),
                            device_dir=Path(lib.name), cwd=folder)
    return int(out.split()[-1])


def smallest_heap(lib, path, kind, what):
    """The smallest -X heapsize= (KB) in which held(...) completes."""
    def fits(kilobytes):
        try:
            held(lib, path, kind, what, "%dk" % kilobytes)
            return True
        except unixport.MicroPythonError:
            return False

    low, high = 8, 4096  # low fails, high fits
    assert not fits(low) and fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high
