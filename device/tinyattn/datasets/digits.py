"""Handwritten digits as a sequence task: each 8x8 image is 8 tokens (its rows) of 8 pixels.

The model: Tokens(8), Dense 8 -> E, a learned positional embedding, two encoder layers,
average pool, Dense E -> 10. The data is data/digits.csv of the repository (copy it to the
board: `mpremote cp data/digits.csv :digits.csv`); pixels 0..16 become 0..1.
tinyattn_host.digits reads DIGITS_CONFIG from this file, so it imports nothing at the top.
"""

SEQ_LEN, FEATURES, CLASSES = 8, 8, 10
EMBED_DIM, NUM_HEADS, FEEDFORWARD = 24, 4, 48
_ENCODER = ["TransformerEncoderLayer", EMBED_DIM, NUM_HEADS, FEEDFORWARD, 0.0, "relu", False,
            1e-5, SEQ_LEN, False]
DIGITS_CONFIG = [
    ["Tokens", SEQ_LEN],  # (B, 64) -> (B*8, 8): one image row a token
    ["Dense", FEATURES, EMBED_DIM, True],
    ["PositionalEmbedding", SEQ_LEN, EMBED_DIM],
    _ENCODER, list(_ENCODER),
    ["GlobalAvgPool", SEQ_LEN],
    ["Dense", EMBED_DIM, CLASSES, True],
]
PIXEL_MAX = 16.0
ROWS = 1797
BATCH_SIZE = 16
SCHEDULE = ((12, 2e-3), (4, 5e-4), (4, 1e-4))  # (epochs, Adam's lr) phases, one Adam


def digits_model(seed=42):
    """The digits model as a Sequential, weights from Rng(seed)."""
    from ..nn.sequential import Sequential

    return Sequential.from_config(DIGITS_CONFIG, seed=seed)


def load_digits(path="digits.csv", test_ratio=0.2, seed=42, rows=ROWS):
    """(train, test) Datasets of the first `rows` rows of the CSV, split as
    Dataset.split(test_ratio, seed) splits.

    Each row is parsed straight into its place in train or test, so the heap holds the
    data once (1797 x 64 float32: 460 KB; a board needs PSRAM for it).
    """
    from ulab import numpy as np

    from .dataset import Dataset
    from ..rng import Rng, permutation

    n_test = int(rows * test_ratio + 0.5)
    order = permutation(rows, Rng(seed))
    where = [0] * rows
    for position, row in enumerate(order):
        where[row] = position
    X_test, X_train = np.zeros((n_test, 64)), np.zeros((rows - n_test, 64))
    y_test, y_train = [0] * n_test, [0] * (rows - n_test)
    with open(path) as f:
        if not f.readline().startswith("p00,"):
            raise ValueError("%s is not digits.csv (its header starts with p00)" % path)
        for row in range(rows):
            line = f.readline()
            if not line:
                raise ValueError("%s ends after %d rows, %d expected" % (path, row, rows))
            values = [int(v) for v in line.split(",")]
            if len(values) != 65:
                raise ValueError("%s: line %d has %d values, not 65" % (path, row + 2, len(values)))
            k = where[row]
            X, y = (X_test, y_test) if k < n_test else (X_train, y_train)
            k = k if k < n_test else k - n_test
            X[k, :] = np.array(values[:64]) * (1.0 / PIXEL_MAX)
            y[k] = values[64]
    return Dataset(X_train, y_train), Dataset(X_test, y_test)


def train_digits(path="digits.csv", schedule=SCHEDULE, batch_size=BATCH_SIZE, seed=42,
                 log_every=4):
    """Load, train and evaluate the digits model; returns (model, accuracy, seconds).

    One Adam through the phases of `schedule`; phase k shuffles with seed + k.
    """
    from ..training import evaluate, train
    from ..nn.optim import Adam

    train_set, test_set = load_digits(path, seed=seed)
    model = digits_model(seed)
    print("training the digits model: %d parameters, %d train rows, %d test rows"
          % (model.num_params(), len(train_set), len(test_set)))
    optimizer = Adam(model.collect_params(), lr=schedule[0][1])
    seconds = 0.0
    for k, (epochs, lr) in enumerate(schedule):
        optimizer.lr = lr
        print("phase %d: %d epochs at lr %g" % (k + 1, epochs, lr))
        seconds += train(model, train_set, epochs=epochs, batch_size=batch_size, seed=seed + k,
                         optimizer=optimizer, log_every=log_every)["seconds"]
    accuracy = evaluate(model, test_set, batch_size)
    print("test accuracy %.2f%% (%d of %d) after %.1f s of training"
          % (100 * accuracy, round(accuracy * len(test_set)), len(test_set), seconds))
    return model, accuracy, seconds
