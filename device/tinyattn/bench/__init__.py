"""Speed and memory on the device: `import tinyattn.bench; tinyattn.bench.run()`.

Prints each result as it is measured, one line each: plan.MARK and a JSON object whose
"kind" is "header", "largest" (with a "trial" line per S tried), "attention", "iris",
"stream" (bench/stream.py) or "done". `make bench` (tinyattn_host.bench) renders them as tables and plots. It measures the
package through its public API (tinyattn.int8.quantize(...).forward for the int8 path).

Timing: the paths of a shape take turns (see medians): a warm-up call each, then up to
`repeats` rounds (at least 3, fewer when a call would pass `cap` seconds), the medians. A
call predicted to take over `cap` seconds (from the path's time
per multiply-add on the last shape measured) is "skip"; one that raises MemoryError is "OOM".
Nothing is asserted: speed is reported, never tested.
"""

import gc
import json
import sys
import time

import ulab
from ulab import numpy as np

from ..nn.attention import Attention
from .fit import fits
from .timing import OOM, SKIP, timed, medians  # noqa: F401  (medians: the public name)
from .plan import (IRIS_BATCHES, LARGEST_E, LARGEST_H, LARGEST_LIMIT, MARK, PATHS,
                        QUICK_LIMIT, largest_seq_len, macs, shapes)
from ..rng import Rng

def emit(record):
    """Print one result line: MARK, then the record as JSON."""
    print(MARK + json.dumps(record))


# ---- the interpreter ----------------------------------------------------------------------
def header():
    """The interpreter, ulab, float width, word size, heap, and where the package loads from."""
    impl = sys.implementation
    gc.collect()
    return {
        "kind": "header",
        "interpreter": "%s %s" % (impl.name, ".".join(str(v) for v in impl.version[:3])),
        "machine": getattr(impl, "_machine", sys.platform),
        "platform": sys.platform,
        "ulab": ulab.__version__,
        "float": "float32" if np.float == 102 else "float64",
        "word_bits": 64 if sys.maxsize > 0x7FFFFFFF else 32,
        "heap_bytes": gc.mem_free() + gc.mem_alloc(),
        "free_bytes": gc.mem_free(),
        "package_file": getattr(sys.modules["tinyattn.nn.attention"], "__file__", "?"),
    }


# ---- Attention -----------------------------------------------------------------------------
def _random(rows, cols, seed, scale=1.0):
    return Rng(seed).uniform_matrix(rows, cols, -scale, scale)


def _layer(E, H, S, checkpoint=False):
    """Attention(E, H) with non-zero biases, so that every path adds them for real; the same
    parameters whether checkpoint is on or off."""
    layer = Attention(E, H, checkpoint=checkpoint, seed=S + E)
    for name, param, _ in layer.collect_params(False):
        if name[0] == "b":
            param[:] = _random(1, E, len(name) + S, 0.1)[0, :]
    return layer


def _fwd_bwd(layer, x, S):
    return lambda: layer.backward(layer.forward(x, S, training=True))


def held_bytes(E, H, S, x, checkpoint=False):
    """Heap a forward leaves allocated (the caches backward needs), its output dropped:
    gc.mem_alloc() after the forward minus before it, on a fresh layer."""
    layer = Attention(E, H, checkpoint=checkpoint, seed=1)
    gc.collect()
    before = gc.mem_alloc()
    layer.forward(x, S, training=True)
    gc.collect()
    return gc.mem_alloc() - before


def attention(B, S, E, H, repeats=5, cap=1.0, rates=None):
    """One shape: each path's median ms (or OOM / skip) and the heap the caches hold.

    The int8 forward is the public one: `quant.quantize(layer, x[:S], seq_len=S).forward(x)`.
    """
    from ..int8 import quantize

    rates = {} if rates is None else rates
    row = {"kind": "attention", "B": B, "S": S, "E": E, "H": H, "runs": {}}
    calls = dict((path, None) for path in PATHS)
    layer = lean = x = qmodel = None
    try:
        layer, lean = _layer(E, H, S), _layer(E, H, S, checkpoint=True)
        row["params"] = layer.num_params()
        row["cache_bytes"] = layer.cache_bytes(B, S)
        row["cache_bytes_ckpt"] = lean.cache_bytes(B, S)
        x = _random(B * S, E, 3 * S)
        calls["float_fwd"] = lambda: layer.forward(x, S)
        calls["float_fwd_bwd"] = _fwd_bwd(layer, x, S)
        calls["float_fwd_bwd_ckpt"] = _fwd_bwd(lean, x, S)
        qmodel = quantize(layer, x[0:S, :], seq_len=S)
        calls["int8_fwd"] = lambda: qmodel.forward(x)
    except MemoryError:
        pass
    work = macs(B, S, E)
    units = dict((path, work * (3 if "bwd" in path else 1)) for path in PATHS)
    timed(row, calls, units, repeats, cap, rates)
    calls = layer = lean = qmodel = None
    gc.collect()
    for key, checkpoint in (("held", False), ("held_ckpt", True)):
        try:  # a forward, when one was timed (else what stopped it: OOM or skip)
            row[key] = row["float_fwd"] if row["float_fwd"] in (OOM, SKIP) else held_bytes(
                E, H, S, x, checkpoint)
        except MemoryError:
            row[key] = OOM
        gc.collect()
    return row


# ---- Iris ------------------------------------------------------------------------------------
def iris(repeats=5, cap=1.0):
    """Records for the Iris model: a training epoch, then float and int8 forward at each of
    IRIS_BATCHES (the int8 model is `quant.quantize(model, training rows)`)."""
    from ..datasets.dataset import load_iris
    from ..training import iris_model, train
    from ..nn.optim import Adam
    from ..int8 import quantize

    train_set, test_set = load_iris().split(0.2, seed=42)
    model = iris_model(42)
    optimizer = Adam(model.collect_params(), lr=1e-3)
    epoch = {"kind": "iris_train", "rows": len(train_set), "batch": 16, "runs": {}}
    timed(epoch, {"ms": lambda: train(model, train_set, epochs=1, optimizer=optimizer,
                                       log_every=0)}, {"ms": 1}, repeats, cap, {})
    records = [epoch]
    qmodel = quantize(model, train_set.X)
    for batch in IRIS_BATCHES:
        x = test_set.X[0:batch, :]
        row = {"kind": "iris", "batch": batch, "runs": {}}
        timed(row, {"float_fwd": lambda: model.forward(x),
                     "int8_fwd": lambda: qmodel.forward(x)},
               {"float_fwd": 1, "int8_fwd": 1}, repeats, cap, {})
        records.append(row)
    return records


# ---- the largest S ----------------------------------------------------------------------------
def largest(limit=LARGEST_LIMIT, budget=120.0, emit=emit):
    """Records of the largest S for which Attention(64, 4) forward plus backward on one
    sequence fits this heap for every S up to it, checkpoint off and on (benchfit.fits).
    Each search stops at `limit`, or once it has taken `budget` seconds (a board with
    megabytes of PSRAM would take long): its "limit" is then the last S it tried. `emit`
    gets a "trial" record for each S tried."""
    gc.collect()
    heap = gc.mem_free() + gc.mem_alloc()
    records = []
    for checkpoint in (False, True):
        start, stop = time.ticks_ms(), [limit]

        def trial(S):
            if time.ticks_diff(time.ticks_ms(), start) > budget * 1000:
                stop[0] = S - 1
                return False
            done = fits(S, LARGEST_E, LARGEST_H, checkpoint)
            emit({"kind": "trial", "S": S, "checkpoint": checkpoint, "fits": done})
            return done

        S = largest_seq_len(trial, limit)
        records.append({"kind": "largest", "checkpoint": checkpoint, "limit": stop[0], "S": S,
                        "heap_bytes": heap, "where": "this heap", "E": LARGEST_E,
                        "H": LARGEST_H})
    return records


def run(quick=False, repeats=5, cap=1.0, search_largest=True, emit=emit):
    """Measure everything, printing each record as it comes (at a board's REPL:
    `tinyattn.bench.run()`; `make bench PORT=...` renders the same as tables).

    quick: a tiny grid, for tests; repeats: timed calls at most; cap: seconds a call may
    take; search_largest: the largest-S search in this heap (first, before the timing
    imports the int8 path); emit: what gets each record (printed by default; through the
    link, a RECORD frame: link/run.py).
    """
    emit(header())
    if search_largest:
        for record in largest(QUICK_LIMIT if quick else LARGEST_LIMIT, emit=emit):
            emit(record)
    rates = {}
    for shape in shapes(quick):
        emit(attention(*shape, repeats=repeats, cap=cap, rates=rates))
        gc.collect()
    for record in iris(repeats, cap):
        emit(record)
    from .stream import window
    from .plan import QUICK_STREAM_W, STREAM_W

    for W in QUICK_STREAM_W if quick else STREAM_W:
        emit(window(W, repeats, cap))
        gc.collect()
    from .decoder import context
    from .plan import DECODER_C, QUICK_DECODER_C

    for C in QUICK_DECODER_C if quick else DECODER_C:
        emit(context(C, repeats, cap))
        gc.collect()
    emit({"kind": "done"})
