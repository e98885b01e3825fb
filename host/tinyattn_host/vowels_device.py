"""The host-trained vowels model fine-tuned on the device with its encoder's dropout on:

    .venv/bin/python -m tinyattn_host vowels --finetune-on-device [--epochs 3] [--dropout 0.1]
        [--lr 5e-4] [--heap 8m] [--smallest-heap]
    .venv/bin/python -m tinyattn_host vowels --train-on-device [--dropout 0] ...

trains the model with the reference (as `vowels` does), writes it as a model file beside the
two .ts files in a temporary folder, compiles the package as `make deploy` ships it (.mpy for
the interpreter's architecture) and runs FINETUNE on the unix port ($MICROPYTHON, real ulab
for figures that mean something): the device loads the files, evaluates, rebuilds the model
with dropout p (datasets/vowels.with_dropout, seeded), trains `epochs` with Adam at lr and
evaluates again (--train-on-device: fresh weights from the seed and the host's whole
schedule, datasets/vowels.SCHEDULE, trained on the device). Then one epoch again with the
live heap sampled after every layer's forward and backward (gc.collect, gc.mem_alloc: a lower
bound of the true peak, which holds temporaries inside a layer too), and with --smallest-heap
the smallest -X heapsize= (to 16 KB) with which the whole run completes, by bisection, a
fresh interpreter a trial.
"""

import json
import shutil
import tempfile
from pathlib import Path

from . import modelfile
from .errors import UsageError
from .virtual import unixport

MARK = "@@VOWELS "
FINETUNE = r"""
import gc, json, sys, time
from tinyattn import Adam, evaluate, load, train
from tinyattn.datasets.vowels import SCHEDULE, load_vowels, vowels_model, with_dropout

folder, epochs, lr, p, seed, sample, scratch, rows = (
    sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]),
    sys.argv[6] == "1", sys.argv[7] == "1", int(sys.argv[8]))
gc.collect()
start = gc.mem_alloc()
train_set, test_set = load_vowels(folder)
if rows:  # the first rows of each only: a quick check
    train_set, test_set = train_set.take(list(range(rows))), test_set.take(list(range(rows)))
if scratch:  # the host's recipe on the device: fresh weights, its (epochs, lr) phases
    model, phases = vowels_model(seed, dropout=p), SCHEDULE
    before = evaluate(model, test_set)
else:  # the host's model, then dropout p
    model, phases = load(folder + "/vowels.bin"), ((epochs, lr),)
    before = evaluate(model, test_set)
    model = with_dropout(model, p, seed)
gc.collect()
held = gc.mem_alloc() - start
peak = [0]


def sampled(call):
    def run(*args, **named):
        out = call(*args, **named)
        gc.collect()
        peak[0] = max(peak[0], gc.mem_alloc() - start)
        return out
    return run


if sample:  # one epoch, every layer's forward and backward followed by a heap sample
    phases = ((1, phases[0][1]),)
    for layer in model.layers:
        layer.forward, layer.backward = sampled(layer.forward), sampled(layer.backward)
optimizer = Adam(model.collect_params(), lr=phases[0][1])
losses = []
t0 = time.ticks_ms()
for k, (phase_epochs, phase_lr) in enumerate(phases):
    optimizer.lr = phase_lr
    losses += list(train(model, train_set, epochs=phase_epochs, optimizer=optimizer,
                         seed=seed + k, log_every=1)["loss"])
seconds = time.ticks_diff(time.ticks_ms(), t0) / 1000
print("@@VOWELS " + json.dumps({
    "before": before, "after": evaluate(model, test_set), "test_rows": len(test_set),
    "train_rows": len(train_set), "epochs": len(losses), "seconds": seconds, "held": held,
    "peak": peak[0] if sample else None, "loss": losses}))
"""


def prepare(folder, params, config, ts_files):
    """folder/lib (the package as deploy ships it), folder/vowels.bin, the two .ts files and
    folder/finetune.py; returns how the package was compiled."""
    from .bench.bench import compiled_package

    if params is not None:
        modelfile.write_model(folder / "vowels.bin", modelfile.SEQUENTIAL, {"config": config},
                              params)
    for path in ts_files:
        shutil.copy(path, folder / path.name)
    (folder / "finetune.py").write_text(FINETUNE)
    return compiled_package(unixport.interpreter(), folder / "lib")


def run_once(folder, args, heap, sample=False, echo=None):
    """The device's figures {before, after, seconds, held, peak, loss} of one run at `heap`
    (MicroPythonError when it does not complete); echo(line) for each epoch's line."""
    out = unixport.run_file(folder / "finetune.py", heap=heap, device_dir=folder / "lib",
                            timeout=3600, args=(str(folder), str(args.epochs), str(args.lr),
                                                str(args.dropout), str(args.seed),
                                                "1" if sample else "0",
                                                "1" if args.train_on_device else "0",
                                                str(args.rows or 0)))
    for line in out.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
        if echo:
            echo(line)
    raise unixport.MicroPythonError("Error", "no result line", out)


def smallest_heap(folder, args, low=64, high=16384, step=16):
    """The smallest heap in KB (to `step`) with which the run completes."""
    def fits(kb):
        try:
            run_once(folder, args, "%dk" % kb)
            return True
        except unixport.MicroPythonError:
            return False

    if not fits(high):
        return None
    while high - low > step:
        middle = (low + high) // 2 // step * step
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def check_options(args):
    """The fine-tune options refused in one line before any training starts."""
    if args.epochs < 1:
        raise UsageError("--epochs must be at least 1, got %d" % args.epochs)
    if args.rows is not None and args.rows < 1:
        raise UsageError("--rows must be at least 1, got %d" % args.rows)
    if not 0.0 <= args.dropout < 1.0:
        raise UsageError("--dropout must be in [0, 1), got %g" % args.dropout)
    if not args.lr > 0.0:
        raise UsageError("--lr must be above 0, got %g" % args.lr)


def finetune_command(args, params, config, ts_files):
    """The host-trained `params` of `config` fine-tuned as the docstring says, or with
    --train-on-device (params None) the device's own training from fresh weights (ts_files:
    the train and test .ts files). Print the device's accuracy before and after, the times
    and the heap; exit status 0."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        how = prepare(folder, params, config, ts_files)
        command = unixport.interpreter()
        recipe = ("the host's schedule from fresh weights" if args.train_on_device
                  else "%d epochs, Adam lr %g" % (args.epochs, args.lr))
        print("on the unix port %s (%d-bit, %s), the package %s; heap %s; dropout %g, %s, "
              "seed %d" % (command, unixport.word_bits(command),
                           "real ulab" if unixport.has_ulab(command) else "the ulab STAND-IN: "
                           "its times and heap mean nothing", how, args.heap, args.dropout,
                           recipe, args.seed), flush=True)
        result = run_once(folder, args, args.heap, echo=lambda line: print("  device: " + line,
                                                                         flush=True))
        n, epochs = result["test_rows"], result["epochs"]
        print("device: test accuracy %.2f%% (%d of %d) %s, %.2f%% (%d of %d) after %s with "
              "dropout %g; %d epochs of %d rows in %.1f s (%.2f s an epoch)"
              % (100 * result["before"], round(result["before"] * n), n,
                 "untrained" if args.train_on_device else "as loaded",
                 100 * result["after"], round(result["after"] * n), n,
                 "training (the host's schedule)" if args.train_on_device else "fine-tuning",
                 args.dropout, epochs, result["train_rows"], result["seconds"],
                 result["seconds"] / epochs), flush=True)
        sampled = run_once(folder, args, args.heap, sample=True)
        print("heap: %d bytes held before training (the model and both data sets), peak "
              "%d live at a layer's end (sampled over one epoch)"
              % (result["held"], sampled["peak"]), flush=True)
        if args.smallest_heap:
            kb = smallest_heap(folder, args)
            print("smallest -X heapsize= that completes the run: %s"
                  % ("over 16384k" if kb is None else "%dk" % kb))
    return 0
