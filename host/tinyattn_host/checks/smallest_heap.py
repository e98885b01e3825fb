"""The smallest heap that loads a model file and runs one sample, found on the unix port a
virtual board runs (check-model on a virtual board): the package compiled as `deploy` ships
it, the file loaded from disk as a board loads it from flash (tinyattn.load or
tinyattn.int8.load), one sample run, `-X heapsize=` halved towards the smallest that
completes. A 32-bit port with a real ulab gives an ESP32-S3's figure (float32, 32-bit
words); a 64-bit port's is larger; the stand-in's would mean nothing (not searched)."""

import tempfile
from pathlib import Path

from .. import modelfile
from ..bench.bench import compiled_package
from ..device_modules import device_module
from ..reference.kinds import kind as declared
from ..virtual import unixport
from .model_heap import BOARD_WITHOUT_PSRAM

SCRIPT = """import sys
from ulab import numpy as np
path, rows, width = sys.argv[1], int(sys.argv[3]), int(sys.argv[4])
if sys.argv[2] == "quantized":
    from tinyattn.int8 import load
else:
    from tinyattn import load
model = load(path)
model.forward(np.zeros((rows, width)) + 0.25)
"""


def one_sample_shape(kind, meta):
    """(rows, width) of one sample of a model file's meta (kind: the file's)."""
    if kind == modelfile.QUANTIZED:
        from .int8_model_check import input_width

        first = meta["layers"][0]
        return declared(first["kind"]).in_rows(first), input_width(meta["layers"])
    width, rows, _ = device_module("nn/flow").follow(meta["config"])
    return rows, width


def smallest_heap(model_path, kind, rows, width, low=16, high=8192):
    """The smallest -X heapsize= in KB that loads `model_path` (of file kind `kind`) and runs
    one sample of `rows` rows of `width` numbers; None when `high` KB does not do it."""
    with tempfile.TemporaryDirectory() as tmp:
        lib, script = Path(tmp) / "lib", Path(tmp) / "one_sample.py"
        compiled_package(unixport.interpreter(), lib)
        script.write_text(SCRIPT)

        def completes(kilobytes):
            try:
                unixport.run_file(script, heap="%dk" % kilobytes, device_dir=lib, timeout=300,
                                  args=(str(Path(model_path).resolve()), kind, str(rows),
                                        str(width)))
                return True
            except unixport.MicroPythonError:
                return False

        if not completes(high):
            return None
        while high - low > 1:  # low does not complete, high does
            middle = (low + high) // 2
            low, high = (low, middle) if completes(middle) else (middle, high)
        return high


def report(kilobytes):
    """check-model's lines for a smallest heap (None: it did not complete in 8 MB)."""
    bits = unixport.word_bits(unixport.interpreter())
    where = "this %s-bit unix port with ulab, the package as deploy ships it" % bits
    if kilobytes is None:
        return ["heap to load it from a file and run one sample: more than 8192 KB (%s)" % where,
                "does not fit a board without PSRAM (~%d KB free)" % (BOARD_WITHOUT_PSRAM // 1024)]
    lines = ["heap to load it from a file and run one sample: %d KB, the smallest -X heapsize= "
             "that does it (%s)" % (kilobytes, where)]
    if bits != 32:
        lines.append("  (a %s-bit port: an ESP32-S3's figure, 32-bit, is smaller; "
                     "MICROPYTHON=<a 32-bit port> gives it)" % bits)
    fits = kilobytes <= BOARD_WITHOUT_PSRAM // 1024
    lines.append("%s a board without PSRAM (~%d KB free)" % (
        "fits" if fits else "does not fit", BOARD_WITHOUT_PSRAM // 1024))
    return lines
