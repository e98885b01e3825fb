"""check-model for an int8 model file (quantize's, or a board's tinyattn.int8 save): loaded on
the device (LOAD_QMODEL), the input rows quantized here as the board quantizes them, each
batch's integer outputs (FORWARD_INT8) against the integer reference bit for bit; with
`expect` (PyTorch's outputs), the dequantized outputs' error against them is printed (int8
precision: it says how good the int8 model is, it does not fail the check)."""

import numpy as np

from .. import protocol
from ..quantize import in_scale, out_scale, quantize_tensor
from ..reference.kinds import kind as declared
from ..reference.sequential import int8_forward, int8_layers
from . import model_heap


def input_width(specs):
    """The input width of an int8 model's layer specs, None when its first layers do not fix it
    (each kind's declaration says, reference/kinds.py: in_width)."""
    return declared(specs[0]["kind"]).in_width(
        specs[0], lambda: input_width(specs[1:]) if len(specs) > 1 else None)


def check_int8_model(link, model_path, meta, arrays, X, batch_size, out, expect, checked,
                     heap_verdict=True):
    """Load the int8 model behind `link`, run X; returns (ok, worst relative error against
    expect, or 0). `checked(X, width)` checks the rows and gives (X, rows a sample)."""
    specs = meta["layers"]
    X, rows_per_sample = checked(X, input_width(specs))
    layers = int8_layers(specs, arrays)
    scale = in_scale(specs)
    free = link.hello()["free"]
    link.request(protocol.LOAD_QMODEL, {"layers": specs}, arrays)
    one = quantize_tensor(X[:rows_per_sample], scale)
    held = model_heap.measure(link, free,
                              lambda: link.request(protocol.FORWARD_INT8, {}, {"x": one}))
    for line in model_heap.report(*held, verdict=heap_verdict):
        out(line)
    batch = max(rows_per_sample, batch_size - batch_size % rows_per_sample)
    mismatches, worst = 0, 0.0
    for start in range(0, len(X), batch):
        xq = quantize_tensor(X[start:start + batch], scale)
        head, got = link.request(protocol.FORWARD_INT8, {}, {"x": xq})
        y = got["y"].reshape(head["rows"], head["cols"]).astype(np.int64)
        want = int8_forward(xq.astype(np.int64), layers)[-1]
        bad = int(np.count_nonzero(y != want))
        mismatches += bad
        line = "rows %4d..%-4d  %s" % (start, start + len(xq) - 1,
                                        "bit-exact" if not bad else "%d outputs differ" % bad)
        if expect is not None:
            first = start * len(expect) // len(X)
            e = np.asarray(expect, np.float64)[first:first + len(y)]
            err = float(np.abs(y * out_scale(specs[-1]) - e).max() / max(1.0, np.abs(e).max()))
            worst = max(worst, err)
            line += "  expect %.2e" % err
        out(line + "  %6d us" % head.get("us", 0))
    out("%s: %s on %d rows, the int8 outputs %s the integer reference%s" % (
        "PASS" if not mismatches else "FAIL", model_path, len(X),
        "bit for bit as" if not mismatches else "%d times unlike" % mismatches,
        "; max rel err %.2e against the expected outputs (int8 precision)" % worst
        if expect is not None else ""))
    return not mismatches, worst
