"""Dataset (features and integer labels) with split, shuffle, batches and standardisation."""

from ulab import numpy as np

from ..rng import Rng, permutation
from ..nn.checks import all_finite, require_2d


class Dataset:
    """X (N, F) float features and y, N integer class labels (a list).

    X must be finite (no NaN, no infinity); each label an int >= 0 (or a float equal to
    one). `mean` and `std` are the statistics the features were standardised with, or None.
    """

    def __init__(self, X, y):
        rows, _ = require_2d("X", X)
        if not all_finite(X):
            raise ValueError("X holds NaN or infinity: a Dataset takes finite features only")
        try:
            count = len(y)
        except TypeError:
            raise ValueError("y must be a list of labels, got %r" % (y,))
        if count != rows:
            raise ValueError("X has %d rows but y has %d labels" % (rows, count))
        self.y = [_label(y, i) for i in range(rows)]
        self.X = X
        self.mean = self.std = None

    def __len__(self):
        return len(self.y)

    def take(self, indices):
        """A new Dataset of the rows at `indices`, in that order (the features are copied)."""
        X = np.zeros((len(indices), self.X.shape[1]))
        for k, i in enumerate(indices):
            X[k, :] = self.X[i, :]
        part = Dataset(X, [self.y[i] for i in indices])
        part.mean, part.std = self.mean, self.std
        return part

    def split(self, test_ratio=0.2, seed=None, standardize=True):
        """(train, test): a seeded random round(N * test_ratio) rows for test, the rest train.

        With `standardize`, both are standardised with the statistics of train alone.
        """
        if not isinstance(test_ratio, (int, float)) or not 0 < test_ratio < 1:
            raise ValueError("test_ratio must be a number in (0, 1), got %r" % (test_ratio,))
        n = len(self)
        n_test = int(n * test_ratio + 0.5)
        if not 0 < n_test < n:
            raise ValueError("test_ratio=%r leaves %d of %d rows for test: need 1..%d"
                             % (test_ratio, n_test, n, n - 1))
        order = permutation(n, Rng(seed))
        train, test = self.take(order[n_test:]), self.take(order[:n_test])
        if standardize:
            test.standardize(*train.standardize())
        return train, test

    def shuffle(self, seed=None):
        """Put the rows in a seeded random order, in place; returns self.

        The swaps of `permutation`, done on the rows themselves: no new arrays.
        """
        rng = Rng(seed)
        X, y = self.X, self.y
        row = np.zeros(X.shape[1])
        for i in range(len(y) - 1, 0, -1):
            j = rng.next32() % (i + 1)
            row[:] = X[i, :]
            X[i, :] = X[j, :]
            X[j, :] = row
            y[i], y[j] = y[j], y[i]
        return self

    def batches(self, batch_size):
        """(X rows, labels) of batch_size rows at a time, in order; the last may be smaller."""
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError("batch_size must be an int >= 1, got %r" % (batch_size,))
        n = len(self)
        for start in range(0, n, batch_size):
            stop = min(start + batch_size, n)
            yield self.X[start:stop, :], self.y[start:stop]

    def standardize(self, mean=None, std=None):
        """x = (x - mean) / std per feature, in place; returns (mean, std).

        Without arguments the statistics are this set's own (std with 1/N; a constant
        feature gets std 1). Pass the training set's to standardise a test set alike.
        """
        n, F = self.X.shape
        if mean is None:
            mean = np.sum(self.X, axis=0) / n
            centred = self.X - mean
            std = np.sqrt(np.sum(centred * centred, axis=0) / n)
            for j in range(F):
                if std[j] == 0.0:
                    std[j] = 1.0
        elif getattr(mean, "shape", None) != (F,) or getattr(std, "shape", None) != (F,):
            raise ValueError("mean and std must both be arrays of shape (%d,)" % F)
        self.X -= mean
        self.X[:] = self.X / std  # not /=, which the ulab stand-in cannot do in place
        self.mean, self.std = mean, std
        return mean, std


def _label(y, i):
    """y[i] as a class index: an int >= 0 (a float equal to one will do)."""
    label = y[i]
    if isinstance(label, (int, float)) and not isinstance(label, bool) and label >= 0 \
            and label - label == 0 and label == int(label):
        return int(label)
    raise ValueError("y[%d] must be a class index (an int >= 0), got %r" % (i, label))




def load_iris():
    """The bundled Iris set: X (150, 4) in cm, y in 0..2 (see tinyattn.iris.CLASSES)."""
    from . import iris

    X = np.zeros((iris.COUNT, 4))
    y = []
    for i in range(iris.COUNT):
        features, label = iris.record(i)
        X[i, :] = np.array(features)
        y.append(label)
    return Dataset(X, y)
