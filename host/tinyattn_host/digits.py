"""Handwritten digits as sequences, on the host: each 8x8 image is 8 tokens (its rows) of 8
pixels; the model is device/tinyattn/datasets/digits.py's DIGITS_CONFIG (Tokens(8), Dense 8 -> E,
positional embedding, two TransformerEncoderLayers, average pool, Dense E -> 10).

`train_host` trains it with the NumPy reference on the device's Dataset.split(0.2, seed)
rows; `.venv/bin/python -m tinyattn_host digits` prints such a run.
"""


import numpy as np

from .reference.training import Adam, accuracy, split_indices, train
from .device_modules import device_module
from .interop.statedict import param_shapes
from .locations import DATA_DIR

DIGITS_CSV = DATA_DIR / "digits.csv"
TEST_RATIO = 0.2


DEVICE = device_module("datasets/digits")
DIGITS_CONFIG = DEVICE.DIGITS_CONFIG  # one definition: the device's


def load_digits(path=DIGITS_CSV):
    """(X (1797, 64) pixels / 16, float32-exact; y (1797,) ints 0..9) from the CSV."""
    table = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)
    return table[:, :-1] / DEVICE.PIXEL_MAX, table[:, -1]


def split(X, y, seed=42):
    """(X_train, y_train, X_test, y_test): the rows Dataset.split(TEST_RATIO, seed) takes."""
    train_rows, test_rows = split_indices(len(y), TEST_RATIO, seed)
    return X[train_rows], y[train_rows], X[test_rows], y[test_rows]


def init_params(config, seed):
    """Float32-exact parameters: Xavier-uniform matrices, zero biases and beta, gamma 1,
    the positional table uniform with standard deviation 0.02 (as the device initialises)."""
    rng = np.random.default_rng(seed)
    params = {}
    for i, spec in enumerate(config):
        for name, shape in param_shapes(spec).items():
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "P":
                value = rng.uniform(-1, 1, shape) * np.sqrt(3.0) * 0.02
            elif leaf == "gamma":
                value = np.ones(shape)
            elif len(shape) == 2:
                bound = np.sqrt(6.0 / sum(shape))
                value = rng.uniform(-bound, bound, shape)
            else:
                value = np.zeros(shape)
            params["%d.%s" % (i, name)] = value
    return {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}


def train_host(schedule=DEVICE.SCHEDULE, batch_size=DEVICE.BATCH_SIZE, seed=42,
               config=DIGITS_CONFIG, log=None):
    """Train with the reference as the device's train_digits does (one Adam through the
    (epochs, lr) phases; phase k shuffles with seed + k); returns (params, test accuracy,
    epoch losses)."""
    X_train, y_train, X_test, y_test = split(*load_digits(), seed)
    params = init_params(config, seed)
    optimizer = Adam(lr=schedule[0][1])
    losses = []
    for k, (epochs, lr) in enumerate(schedule):
        optimizer.lr = lr
        losses += train(config, params, X_train, y_train, epochs=epochs, batch_size=batch_size,
                        seed=seed + k, optimizer=optimizer)
    if log:
        for epoch, loss in enumerate(losses, 1):
            log("epoch %3d/%d  loss %.4f" % (epoch, len(losses), loss))
    return params, accuracy(config, params, X_test, y_test), losses


def digits_command(args):
    """The digits command: train on the host, print the epochs and the test accuracy."""
    import time

    start = time.monotonic()
    params, acc, _ = train_host(log=print)
    n_test = len(split(*load_digits())[3])
    print("reference (float64): test accuracy %.2f%% (%d of %d), %d parameters, %.1f s"
          % (100 * acc, round(acc * n_test), n_test, sum(v.size for v in params.values()),
             time.monotonic() - start))

