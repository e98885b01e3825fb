"""The host-trained vowels model fine-tuned on the device with its encoder's dropout on:

    .venv/bin/python -m tinyattn_host vowels --finetune-on-device [--epochs 3] [--dropout 0.1]
        [--lr 5e-4] [--heap 8m] [--smallest-heap]
    .venv/bin/python -m tinyattn_host vowels --train-on-device [--dropout 0] ...

trains the model with the reference (as `vowels` does), writes it as a model file beside the
two .ts files on a virtual board's flash, and runs tinyattn.vowels_finetune.finetune there
through the link (RUN; the package deployed as `make deploy` ships it; $MICROPYTHON, real ulab
for figures that mean something): the device loads the files, evaluates, rebuilds the model
with dropout p (datasets/vowels.with_dropout, seeded), trains `epochs` with Adam at lr and
evaluates again (--train-on-device: fresh weights from the seed and the host's whole
schedule, datasets/vowels.SCHEDULE, trained on the device). Then one epoch again with the
live heap sampled after every layer's forward and backward (gc.collect, gc.mem_alloc: a lower
bound of the true peak, which holds temporaries inside a layer too), and with --smallest-heap
the smallest virtual board's heap (to 16 KB) with which the whole run completes, by
bisection, a fresh virtual board a trial (its link's own heap included).
"""

import shutil
import tempfile
from pathlib import Path

from . import modelfile
from .board.board import Board
from .errors import DeviceError, HostError, UsageError
from .virtual import unixport

FOLDER = "vowels"  # on the board's flash: the two .ts files and vowels.bin


def prepare(folder, params, config, ts_files):
    """The virtual board's flash in folder/flash: vowels/vowels.bin (the model, unless
    params is None) and the two .ts files there."""
    data = Path(folder) / "flash" / FOLDER
    data.mkdir(parents=True, exist_ok=True)
    if params is not None:
        modelfile.write_model(data / "vowels.bin", modelfile.SEQUENTIAL, {"config": config},
                              params)
    for path in ts_files:
        shutil.copy(path, data / path.name)


def run_once(folder, args, heap, sample=False, echo=None):
    """The device's figures {before, after, seconds, held, peak, loss} of one run on a virtual
    board of `heap` with folder/flash (RUN of tinyattn.vowels_finetune.finetune through the
    link; HostError when it does not complete); echo(line) for each epoch's line."""
    result = {}

    def on_record(record):
        if record["kind"] == "line" and echo:
            echo(record["text"])
        elif record["kind"] == "result":
            result.update(record)

    with Board(port=None, flash_dir=Path(folder) / "flash", heap=heap,
               out=lambda *_: None) as board:
        board.start_link().run("vowels_finetune", "finetune", on_record, {
            "folder": "/" + FOLDER, "epochs": args.epochs, "lr": args.lr, "p": args.dropout,
            "seed": args.seed, "sample": sample, "scratch": args.train_on_device,
            "rows": args.rows or 0}, timeout=3600)
        board.stop_link()
    if not result:
        raise DeviceError("the fine-tune sent no result")
    return result


def smallest_heap(folder, args, low=64, high=16384, step=16):
    """The smallest heap in KB (to `step`) with which the run completes."""
    def fits(kb):
        try:
            run_once(folder, args, "%dk" % kb)
            return True
        except HostError:  # out of memory, on the way or before the link even started
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
        prepare(folder, params, config, ts_files)
        how = "as deployed on the virtual board"
        command = unixport.interpreter()
        recipe = ("the host's schedule from fresh weights" if args.train_on_device
                  else "%d epochs, Adam lr %g" % (args.epochs, args.lr))
        print("on the virtual board: %s (%d-bit, %s), the package %s; heap %s; dropout %g, %s, "
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
            print("smallest virtual board heap that completes the run: %s"
                  % ("over 16384k" if kb is None else "%dk" % kb))
    return 0
