"""Japanese vowels on the host: the .ts files, standardised with the train set's statistics,
and the model of device/tinyattn/datasets/vowels.py trained by the NumPy reference (seeded).

`python -m tinyattn_host vowels [--seed N] [--report DIR] [--causal] [--save FILE]` prints
such a run, with --report writes vowels.json and vowels_training.png, with --save the model
file a board loads; --finetune-on-device: vowels_device.py.
"""

from pathlib import Path

import numpy as np

from . import modelfile
from .cli import output_path
from .errors import InputError, UsageError
from .digits import init_params
from .reference.training import Adam, accuracy, train
from .sequences import frame_statistics, load_ts, padding_mask, standardize
from .device_modules import device_module
from .locations import DATA_DIR

DEVICE = device_module("datasets/vowels")
VOWELS_CONFIG = DEVICE.VOWELS_CONFIG  # one definition: the device's
VOWELS_DIR = DATA_DIR / "japanese_vowels"


def load_vowels(folder=VOWELS_DIR):
    """{"train": (X, y, lengths), "test": (X, y, lengths)}, X (N, 29*12) standardised with
    the train set's statistics over its real frames, padding 0. InputError naming the file
    for one that is not the vowels model's data."""
    train_set, test_set = (_vowels_file(Path(folder) / name)
                           for name in (DEVICE.TRAIN_FILE, DEVICE.TEST_FILE))
    mean, std = frame_statistics(train_set[0], train_set[2], DEVICE.FEATURES)
    return {name: (standardize(X, lengths, mean, std), y, lengths)
            for name, (X, y, lengths) in (("train", train_set), ("test", test_set))}


def _vowels_file(path):
    """(X, y, lengths) of one .ts file, checked against the vowels model's sizes."""
    X, y, lengths, classes = load_ts(path, DEVICE.SEQ_LEN)
    if X.shape[1] != DEVICE.SEQ_LEN * DEVICE.FEATURES:
        raise InputError("%s: series of %d channels; the vowels model takes %d"
                         % (path, X.shape[1] // DEVICE.SEQ_LEN, DEVICE.FEATURES))
    if len(classes) != DEVICE.CLASSES:
        raise InputError("%s: %d classes in @classLabel; the vowels model has %d"
                         % (path, len(classes), DEVICE.CLASSES))
    return X, y, lengths


def train_host(schedule=DEVICE.SCHEDULE, batch_size=DEVICE.BATCH_SIZE, seed=42,
               config=VOWELS_CONFIG, data=None, on_epoch=None):
    """Train with the reference (one Adam through the (epochs, lr) phases; phase k shuffles
    with seed + k); returns (params, test accuracy, epoch losses). on_epoch(epoch, loss,
    params) after every epoch, counted across the phases."""
    data = load_vowels() if data is None else data
    X, y, lengths = data["train"]
    params = init_params(config, seed)
    optimizer = Adam(lr=schedule[0][1])
    losses = []

    def epoch_done(_, loss):
        losses.append(loss)
        if on_epoch:
            on_epoch(len(losses), loss, params)

    for k, (epochs, lr) in enumerate(schedule):
        optimizer.lr = lr
        train(config, params, X, y, epochs=epochs, batch_size=batch_size, seed=seed + k,
              optimizer=optimizer, mask=padding_mask(lengths, DEVICE.SEQ_LEN),
              on_epoch=epoch_done)
    return params, test_accuracy(params, data, config), losses


def test_accuracy(params, data, config=VOWELS_CONFIG, split="test"):
    """The float model's accuracy on the split's padded rows (with their masks)."""
    X, y, lengths = data[split]
    return accuracy(config, params, X, y, padding_mask(lengths, DEVICE.SEQ_LEN))


def causal_config():
    """The config with its encoder layer causal (a stream needs it so)."""
    return DEVICE.vowels_config(causal=True)


def prefix_accuracy(params, data, config, fraction):
    """Test accuracy when each utterance stops after ceil(fraction * its frames) (at least
    one): for a causal model, the class a Stream gives after that many frames (each step of
    a stream is the causal forward of the frames so far, tests/device/test_stream.py)."""
    X, y, lengths = data["test"]
    cut = np.maximum(1, np.ceil(fraction * lengths).astype(int))
    return accuracy(config, params, X, y, padding_mask(cut, DEVICE.SEQ_LEN))


def vowels_command(args):
    """Train, print every epoch and the test accuracy; --report DIR writes vowels.json and
    vowels_training.png (loss, train and test accuracy per epoch). Exit status 0."""
    import json
    import time

    from .checks.plots import training_curve

    config = causal_config() if args.causal else VOWELS_CONFIG
    if args.finetune_on_device or args.train_on_device:
        from .vowels_device import check_options

        check_options(args)
    if args.chip_estimate:
        from .chipcost.stream_estimate import estimate_lines

        print("\n".join(estimate_lines(config, (1, 15, DEVICE.SEQ_LEN))))
        return 0
    folder = Path(args.data) if getattr(args, "data", None) else VOWELS_DIR
    ts_files = [folder / DEVICE.TRAIN_FILE, folder / DEVICE.TEST_FILE]
    if args.save:  # where the results go, checked before any training
        output_path(args.save, "--save")
    if args.report:
        try:
            Path(args.report).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise UsageError("--report %s: %s" % (args.report, err.strerror or err)) from None
    start = time.monotonic()
    data = load_vowels(folder)  # every file checked before any training
    if args.train_on_device:
        from .vowels_device import finetune_command

        return finetune_command(args, None, config, ts_files)
    curve = {"train": [], "test": []}

    def on_epoch(epoch, loss, params):
        for split in curve:
            curve[split].append(test_accuracy(params, data, config, split=split))
        print("epoch %3d  loss %.4f  train %.2f%%  test %.2f%%"
              % (epoch, loss, 100 * curve["train"][-1], 100 * curve["test"][-1]), flush=True)

    params, acc, losses = train_host(seed=args.seed, data=data, on_epoch=on_epoch,
                                     config=config)
    n_test, seconds = len(data["test"][1]), time.monotonic() - start
    print("reference (float64)%s: test accuracy %.2f%% (%d of %d), %d parameters, %.1f s"
          % (", causal" if args.causal else "", 100 * acc, round(acc * n_test), n_test,
             sum(v.size for v in params.values()), seconds))
    if args.causal:
        half = prefix_accuracy(params, data, config, 0.5)
        print("streamed frame by frame: right after the last frame %.2f%%, after half the "
              "frames %.2f%%" % (100 * prefix_accuracy(params, data, config, 1.0), 100 * half))
    if args.save:
        modelfile.write_model(args.save, modelfile.SEQUENTIAL, {"config": config}, params)
        print("wrote %s (%s)" % (args.save, "causal" if args.causal else "not causal"))
    if args.finetune_on_device:
        from .vowels_device import finetune_command

        finetune_command(args, params, config, ts_files)
    if args.report:
        folder = Path(args.report)
        folder.mkdir(parents=True, exist_ok=True)
        summary = {"seed": args.seed, "causal": args.causal, "test_accuracy": acc,
                   "test_rows": n_test,
                   "loss": losses, "train_accuracy": curve["train"],
                   "test_accuracy_per_epoch": curve["test"], "seconds": seconds}
        (folder / "vowels.json").write_text(json.dumps(summary, indent=1) + "\n")
        epochs = list(range(1, len(losses) + 1))
        path = training_curve(folder / "vowels_training.png",
                              "Japanese vowels: the reference's training (seed %d)" % args.seed,
                              losses, {"train": (epochs, curve["train"]),
                                       "test": (epochs, curve["test"])})
        print("wrote %s and %s" % (folder / "vowels.json", path))
    return 0

