"""Check a model file on the board: `.venv/bin/python -m tinyattn_host check-model MODEL
INPUTS.npy [--expect OUT.npy]`.

The model (a tinyattn model file, e.g. from import-torch) is loaded on the device over the
link (in parts when it is larger than one message, with a progress line on a terminal), the
input rows go in batches, and every batch's output is compared with the float64 reference
and, with `expect` (PyTorch's outputs for the same inputs), with those too: relative error
max |device - want| / max(1, max |want|) <= 1e-4 for each. Before anything is sent, the
inputs' width is checked against the model's and the model's size against the board's free
heap (HELLO's `free`).
"""

import time

import numpy as np

from .. import modelfile, protocol
from ..board.board import Board
from ..board.ports import choose
from ..device_modules import device_module
from ..errors import BoardError, InputError, bad_file_is_input_error
from ..interop.arrayfiles import read_array
from ..virtual import unixport
from ..reference.sequential import sequential_forward
from .digits_check import TOLERANCE, relative_error
from . import model_heap
from .progress import Progress


class ModelCheckError(InputError):
    """Inputs or expected outputs that do not fit the model; the message says how."""


class DoesNotFit(BoardError):
    """The model needs more heap than the board has free; the message gives both."""


def load_needs(config, arrays):
    """(heap bytes the device needs to load the model, bytes of its message): the message
    (all its float32 arrays), the weights made from it, as much again for their gradients,
    and the largest array once more, decoded before it is copied into its weight (an
    estimate: the code, a forward's caches and the heap's fragmentation come on top)."""
    message = len(protocol.encode({"config": config}, arrays))
    sizes = [4 * a.size for a in arrays.values()]
    return message + 2 * sum(sizes) + max(sizes, default=0), message


def _inputs(model_path, config, X, width=None):
    """X as float64 rows, checked against the model's input width (a float config's, or
    `width`); (X, rows a sample)."""
    width, rows_per_sample, _ = device_module("nn/flow").follow(config) if config else \
        (width, 1, None)
    X = np.asarray(X)
    _finite(X, "the inputs")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ModelCheckError("the inputs must be (rows, features), got shape %s" % (X.shape,))
    if width is not None and X.shape[1] != width:
        raise ModelCheckError("the inputs have rows of %d features; %s takes rows of %d"
                              % (X.shape[1], model_path, width))
    if X.shape[0] % rows_per_sample:
        raise ModelCheckError("the inputs have %d rows; %s takes sequences of %d rows"
                              % (X.shape[0], model_path, rows_per_sample))
    with np.errstate(over="ignore"):
        X = X.astype(np.float32)
    _finite(X, "the inputs (as float32, the board's numbers)")
    return X.astype(np.float64), rows_per_sample


def _int8_layers(path, meta, arrays):
    """The reference's int8 layers of an int8 file's description; ModelCheckError naming the
    file when they cannot be made (the board's LOAD_QMODEL checks every field again)."""
    from ..reference.sequential import int8_layers

    layers = meta.get("layers") if isinstance(meta, dict) else None
    if not isinstance(layers, list) or not layers:
        raise ModelCheckError("%s: an int8 model's description must be {\"layers\": [...]}"
                              % path)
    try:
        return int8_layers(layers, arrays)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
        raise ModelCheckError("%s holds an int8 model the reference cannot read (%s: %s)"
                              % (path, type(err).__name__, err))


def _finite(values, what):
    """ModelCheckError unless `values` are numbers, all finite (a NaN compares as no error)."""
    values = np.asarray(values)
    if values.dtype.kind not in "iuf":
        raise ModelCheckError("%s must be numbers, got an array of %s" % (what, values.dtype))
    if not np.isfinite(values).all():
        raise ModelCheckError("%s hold NaN or infinity: nothing can be compared with them"
                              % what)


def check_model(link, model_path, X, batch_size=16, out=print, expect=None, progress=None,
                heap_verdict=True):
    """Load `model_path` on the device behind `link`, push X (rows, features), compare with
    the reference and with `expect` when given; returns (ok, worst relative error).
    heap_verdict: say from the heap held after one sample whether the model fits a board
    without PSRAM (False: the caller measures it otherwise)."""
    kind, meta, arrays = modelfile.read_model(model_path)
    if kind == modelfile.QUANTIZED:
        from .int8_model_check import check_int8_model

        return check_int8_model(link, model_path, meta, arrays, X, batch_size, out, expect,
                                lambda X, width: _inputs(model_path, None, X, width),
                                heap_verdict)
    meta, arrays = modelfile.read_float_model(model_path)  # checked as the device checks it
    config = meta["config"]
    X, rows_per_sample = _inputs(model_path, config, X)
    params = {k: v.astype(np.float64) for k, v in arrays.items()}
    want, _ = sequential_forward(config, params, X)
    if expect is not None and np.shape(expect) != want.shape:
        raise ModelCheckError("the expected outputs have shape %s; the model gives %s for "
                              "these inputs" % (np.shape(expect), want.shape))
    if expect is not None:
        _finite(expect, "the expected outputs")
    free = link.hello()["free"]
    needs, message = load_needs(config, arrays)
    does_not_fit = "%s does not fit the board's heap: %%s (about %d KB needed: its %d KB " \
        "message, the weights, their gradients, the largest array decoded; the board has %d " \
        "KB free)" % (model_path, needs // 1024, message // 1024, free // 1024)
    if needs > free:
        raise DoesNotFit(does_not_fit % "not loaded")
    progress = progress or Progress()
    link.progress = lambda done, total: progress.show(done // 1024, total // 1024,
                                                      "KB of %s" % model_path)
    started = time.monotonic()
    try:
        link.load_model(config, params)
    except protocol.ErrorReply as err:
        if err.name != "NO_MEMORY":
            raise
        raise DoesNotFit(does_not_fit % "it ran out of memory loading it (the free heap is "
                         "in pieces)") from None
    finally:
        progress.clear()
        link.progress = None
    out("loaded %s: %d KB in %.1f s, %d KB of the board's heap free before"
        % (model_path, message // 1024, time.monotonic() - started, free // 1024))
    one = X[:rows_per_sample]
    held = model_heap.measure(link, free, lambda: link.request(protocol.FORWARD, {}, {"x": one}))
    for line in model_heap.report(*held, verdict=heap_verdict):
        out(line)
    batch = max(rows_per_sample, batch_size - batch_size % rows_per_sample)
    worst = {"reference": 0.0, "expect": 0.0}
    for start in range(0, len(X), batch):
        xb = X[start:start + batch]
        head, got = link.forward(xb)
        got = got["logits"].astype(np.float64)
        first = start * len(want) // len(X)  # the outputs of these input rows
        rows = slice(first, first + len(got))
        errors = {"reference": relative_error(got, want[rows])}
        if expect is not None:
            errors["expect"] = relative_error(got, np.asarray(expect, np.float64)[rows])
        for name, err in errors.items():
            worst[name] = max(worst[name], err)
        bad = [name for name, err in errors.items() if err > TOLERANCE]
        out("rows %4d..%-4d  rel err %.2e%s  %6d us%s" % (
            start, start + len(xb) - 1, errors["reference"],
            "  expect %.2e" % errors["expect"] if expect is not None else "",
            head.get("us", 0), "  <-- MISMATCH (%s)" % ", ".join(bad) if bad else ""))
    return _summary(model_path, len(X), worst, expect is not None, out)


EXPECT_ONLY = ("only the expected outputs differ. The usual cause: the PyTorch model was in "
               "training mode when it made them (dropout on): call model.eval() first. Else "
               "the description or the model file does not compute what made them")
"""What a FAIL says when the board agrees with the reference and the expected outputs do not."""


def _summary(model_path, rows, worst, with_expect, out):
    ok_ref = worst["reference"] <= TOLERANCE
    ok_expect = not with_expect or worst["expect"] <= TOLERANCE
    parts = ["max rel err %.2e against the reference" % worst["reference"]]
    if with_expect:
        parts.append("%.2e against the expected outputs" % worst["expect"])
    line = "%s: %s on %d rows, %s (tolerance %.0e)" % (
        "PASS" if ok_ref and ok_expect else "FAIL", model_path, rows, ", ".join(parts), TOLERANCE)
    if not ok_ref:
        line += "; the board disagrees with the reference"
    if not ok_expect:
        line += ("; the expected outputs disagree with the board%s" % (
            " and the reference agrees with the board: " + EXPECT_ONLY if ok_ref else ""))
    out(line)
    return ok_ref and ok_expect, max(worst.values())


def check_model_command(args):
    """The check-model command: exit status 0 when the device agrees with the reference (and
    the expected outputs), 1 if not (or for a bad file, or a request the device refused), 2
    for a board problem (one the model does not fit in among them)."""
    with bad_file_is_input_error():
        X = read_array(args.inputs, "input rows")
        expect = read_array(args.expect, "expected outputs") if args.expect else None
        kind, meta, arrays = modelfile.read_model(args.model)  # refused before the board opens,
        if kind == modelfile.QUANTIZED:
            _int8_layers(args.model, meta, arrays)
        else:
            meta, arrays = modelfile.read_float_model(args.model)
            for name, values in arrays.items():
                _finite(values, "%s: array %s" % (args.model, name))
            _inputs(args.model, meta["config"], X)  # as are inputs that do not fit it
        if expect is not None:
            _finite(expect, "the expected outputs")
    port = choose(args.port)
    search = port is None and unixport.has_ulab(unixport.interpreter())  # a virtual board's
    with Board(port=port, deploy="auto", heap=args.heap) as board:
        ok, _ = check_model(board.start_link(), args.model, X, args.batch_size, expect=expect,
                            heap_verdict=not search)
    if search:
        from .smallest_heap import one_sample_shape, report, smallest_heap

        rows, width = one_sample_shape(kind, meta)
        print("\n".join(report(smallest_heap(args.model, kind, rows, width))))
    return 0 if ok else 1
