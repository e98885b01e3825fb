"""How many rows of a request fit in a board's heap: the batch sizing of `make run`.

A request of B rows takes about FIXED[work] + B * row_bytes(config, work) of heap on top of
the model loaded: FACTOR[work] times the floats its forward keeps per input row (the NumPy
reference's caches and output, counted on a one-row batch), FACTOR covering the device's
temporaries and the request and reply records. A float is 4 bytes on a board (float32), 8
on a unix port built with double-precision floats (HELLO's `float` says). The factors are upper bounds for ulab on the
unix ports (i686 and 64-bit): tests/device/test_heap_fit_device.py runs the rows they give in
the heap they were sized for (and fails with factors a third as large), and
tests/e2e/test_small_heap.py runs the whole `make run` in 300 KB.
"""

import math
from functools import lru_cache

import numpy as np

from ..device_modules import device_module
from ..reference.sequential import sequential_forward
from ..interop.statedict import param_shapes

FACTOR = {"forward": 1.8, "quantize": 1.5, "train": 1.8}
FIXED = {"forward": 0, "quantize": 64 * 1024, "train": 16 * 1024}
"""Heap a request takes whatever its rows: the code its first call imports (the int8 modules
for QUANTIZE, the optimizer for TRAIN_STEP), which the free bytes of a model loaded lack."""
FIXED_32BIT = {"quantize": 36 * 1024}  # a 32-bit board's (ESP32-S3, i686), where smaller
CALIBRATION_BATCH = 16  # the samples QUANTIZE calibrates at a time (int8.quantize's default)
INPUT_COPIES = 8  # a calibration row's float32 bytes, times this: message, record, matrix
RESERVE = 24 * 1024  # heap kept back: the link's buffers, and room for fragmentation
MODEL_FACTOR = 5.5  # a LOAD_MODEL needs about this times its parameters' bytes free


def rows_that_fit(free, config, asked, work, word_bits=64, float_bytes=4):
    """The rows (1 to `asked`) of a `work` request ("forward", "quantize" or "train") on
    the model of `config` that fit in `free` bytes of heap (the board's, model loaded);
    `word_bits` the board's (board_word_bits: 64 when not known, the larger estimate) and
    `float_bytes` its ulab float's (HELLO's "float")."""
    per_row = row_bytes(tuple(map(tuple, config)), work) * float_bytes // 4
    fixed = (FIXED_32BIT if word_bits == 32 else {}).get(work, FIXED[work])
    if work == "train":  # the first TRAIN_STEP makes the gradients, as large as the parameters
        fixed += float_bytes * parameter_count(config)
    budget = free - RESERVE - fixed
    if work != "quantize":
        return max(1, min(asked, int(budget // per_row)))
    own = INPUT_COPIES * float_bytes * _input_width(config)  # every row's, beyond the batch's
    rows = int(budget // (per_row + own))
    if rows >= CALIBRATION_BATCH:
        rows = int((budget - CALIBRATION_BATCH * per_row) // own)
    return max(1, min(asked, rows))


def board_word_bits(hello):
    """32 or 64: the word size of the board that answered HELLO, from its .mpy architecture
    (sys.implementation._mpy >> 10; x86-64 and rv64 are the 64-bit ones); 64 when unknown."""
    mpy = hello.get("mpy")
    if not isinstance(mpy, int) or isinstance(mpy, bool) or not 1 <= (mpy >> 10) & 15 <= 12:
        return 64
    return 64 if (mpy >> 10) & 15 in (2, 12) else 32


def model_fits(free, config, float_bytes=4):
    """Whether a LOAD_MODEL of `config` fits in `free` bytes: the request, the model and its
    gradients, each as large as the parameters (floats of `float_bytes`)."""
    return free - RESERVE >= MODEL_FACTOR * float_bytes * parameter_count(config)


def parameter_count(config):
    return sum(int(np.prod(shape)) for spec in config for shape in param_shapes(spec).values())


@lru_cache(maxsize=None)
def row_bytes(config, work):
    """Heap bytes one input row of a `work` request takes in float32 (config: a tuple of
    tuples)."""
    config = [list(spec) for spec in config]
    params = {"%d.%s" % (i, name): np.zeros(shape) for i, spec in enumerate(config)
              for name, shape in param_shapes(spec).items()}
    y, caches = sequential_forward(config, params, np.zeros((1, _input_width(config))))
    return math.ceil(4 * FACTOR[work] * (_floats(caches) + y.size))


def _input_width(config):
    """Input columns of a model: the first width its layers fix, as nn/flow.py follows each
    kind's declaration (a Tokens' seq_len before it multiplies it)."""
    width = device_module("nn/flow").follow(config)[0]
    if width is None:
        raise ValueError("no layer gives the input width of %r" % (config,))
    return width


def _floats(value):
    """The number of floats in the arrays of a nest of dicts, lists and tuples."""
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, dict):
        return sum(_floats(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_floats(v) for v in value)
    return 0
