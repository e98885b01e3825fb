"""SequenceDataset: variable-length sequences in padded storage, and the `.ts` file loader."""

from ulab import numpy as np

from ..nn.masks import padding_mask
from .dataset import Dataset


class SequenceDataset(Dataset):
    """N sequences of 1..seq_len frames of `features` values each, and their labels.

    X (N, seq_len * features): row i holds sequence i's frames one after the other, zeros
    after its lengths[i] frames (a Tokens(seq_len) layer makes them token rows). Shuffled,
    split and batched as a Dataset; batches(n) yields (x, labels, mask), mask the (B,
    seq_len) padding mask of the batch, for Sequential.forward(x, training, mask).
    """

    def __init__(self, X, y, lengths, seq_len):
        Dataset.__init__(self, X, y)
        if not isinstance(seq_len, int) or seq_len < 1 or X.shape[1] % seq_len:
            raise ValueError("seq_len must be an int >= 1 dividing X's %d columns, got %r"
                             % (X.shape[1], seq_len))
        if not isinstance(lengths, list) or len(lengths) != len(self.y):
            raise ValueError("lengths must be a list of %d ints, got %r" % (len(self.y), lengths))
        for n in lengths:
            if not isinstance(n, int) or not 1 <= n <= seq_len:
                raise ValueError("each length must be an int in 1..%d, got %r" % (seq_len, n))
        self.lengths = lengths
        self.seq_len = seq_len
        self.features = X.shape[1] // seq_len

    def _row_lists(self):
        return [self.y, self.lengths]

    def _like(self, X, row_lists):
        return SequenceDataset(X, row_lists[0], row_lists[1], self.seq_len)

    def batches(self, batch_size):
        """(X rows, labels, padding mask) of batch_size sequences at a time, in order."""
        for start, (x, labels) in zip(range(0, len(self), batch_size),
                                      Dataset.batches(self, batch_size)):
            yield x, labels, padding_mask(self.lengths[start:start + len(labels)], self.seq_len)

    def frames(self):
        """(i, column) of every real frame: sequence i's frame s starts at column s*F."""
        F = self.features
        for i, n in enumerate(self.lengths):
            for s in range(n):
                yield i, s * F

    def standardize(self, mean=None, std=None):
        """Each feature x = (x - mean) / std over the real frames, in place (padding stays
        0); returns (mean, std). Without arguments: this set's own statistics over its
        real frames (std with 1/count; a constant feature gets 1)."""
        F, X = self.features, self.X
        if mean is None:
            count = sum(self.lengths)
            total, squares = np.zeros(F), np.zeros(F)
            for i, c in self.frames():
                total += X[i, c:c + F]
            mean = total / count
            for i, c in self.frames():
                centred = X[i, c:c + F] - mean
                squares += centred * centred
            std = np.sqrt(squares / count)
            for j in range(F):
                if std[j] == 0.0:
                    std[j] = 1.0
        elif getattr(mean, "shape", None) != (F,) or getattr(std, "shape", None) != (F,):
            raise ValueError("mean and std must both be arrays of shape (%d,)" % F)
        for i, c in self.frames():
            X[i, c:c + F] = (X[i, c:c + F] - mean) / std
        self.mean, self.std = mean, std
        return mean, std


def load_ts(path, seq_len=None):
    """A SequenceDataset of the `.ts` file at `path` (its header names the classes, which
    become labels 0, 1, ... in its order); seq_len: the padded length (default: the longest
    series). Two passes over the file: the heap holds the padded floats once, and one line's
    values at a time. ValueError naming the line that is not valid."""
    from . import tsformat

    count, longest = 0, 0
    with open(path) as f:
        header = tsformat.read_header(f)
        for frames, _ in tsformat.records(f, header):
            count, longest = count + 1, max(longest, len(frames))
    if not count:
        raise ValueError("%s holds no series after @data" % path)
    S = longest if seq_len is None else seq_len
    if not isinstance(S, int) or S < longest:
        raise ValueError("seq_len %r is shorter than the longest series (%d frames)"
                         % (seq_len, longest))
    F = header["dimensions"]
    X = np.zeros((count, S * F))
    labels, lengths = [], []
    with open(path) as f:
        header = tsformat.read_header(f)
        for i, (frames, label) in enumerate(tsformat.records(f, header)):
            for s, frame in enumerate(frames):
                X[i, s * F:(s + 1) * F] = np.array(frame)
            labels.append(label)
            lengths.append(len(frames))
    data = SequenceDataset(X, labels, lengths, S)
    data.classes = header["classes"]
    return data
