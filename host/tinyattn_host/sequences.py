"""Variable-length sequences on the host: a `.ts` file read with the device's own parser
(device/tinyattn/datasets/tsformat.py) into the padded storage of the device's SequenceDataset, and
its standardisation over the real frames, as SequenceDataset.standardize does it."""

import numpy as np

from .device_modules import device_module
from .errors import InputError

TS = device_module("datasets/tsformat")


def load_ts(path, seq_len=None):
    """(X (N, S*F) padded with zeros, y (N,), lengths (N,), class names) of a `.ts` file, as
    tinyattn.datasets.sequences.load_ts stores it; S = seq_len or the longest series.
    InputError naming the file (and the line) for one that cannot be read or is not valid."""
    try:
        with open(path, encoding="utf-8") as f:
            header = TS.read_header(f)
            series = list(TS.records(f, header))
    except OSError as err:
        raise InputError("%s: %s" % (path, err.strerror or err)) from None
    except ValueError as err:
        raise InputError("%s: %s" % (path, err)) from None
    if not series:
        raise InputError("%s holds no series after @data" % path)
    longest = max(len(frames) for frames, _ in series)
    S = longest if seq_len is None else seq_len
    if S < longest:
        raise InputError("%s: seq_len %d is shorter than the longest series (%d frames)"
                         % (path, S, longest))
    F = header["dimensions"]
    X = np.zeros((len(series), S * F))
    for i, (frames, _) in enumerate(series):
        X[i, :len(frames) * F] = np.asarray(frames, dtype=np.float64).ravel()
    y = np.array([label for _, label in series])
    lengths = np.array([len(frames) for frames, _ in series])
    return X, y, lengths, header["classes"]


def padding_mask(lengths, seq_len):
    """(N, S) of 1.0 for the first lengths[i] frames of row i, 0.0 after."""
    return (np.arange(seq_len)[None, :] < np.asarray(lengths)[:, None]).astype(np.float64)


def frame_statistics(X, lengths, features):
    """(mean, std) of each feature over the real frames (std with 1/count; 1 for a constant
    feature)."""
    frames = X.reshape(len(X), -1, features)[padding_mask(lengths, X.shape[1] // features) > 0]
    std = frames.std(axis=0)
    return frames.mean(axis=0), np.where(std == 0.0, 1.0, std)


def standardize(X, lengths, mean, std):
    """X with each real frame's features (x - mean) / std; padding stays 0."""
    features = len(mean)
    keep = padding_mask(lengths, X.shape[1] // features)[:, :, None]
    out = (X.reshape(len(X), -1, features) - mean) / std * keep
    return out.reshape(X.shape)
