"""Softmax cross-entropy for classification."""

import math

from ulab import numpy as np

from .checks import require_float_rows


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy of logits (B, C) for integer labels; returns (loss, dlogits).

    loss = mean_b(log(sum_c exp(z_bc)) - z_b,label_b), computed with the row maximum
    subtracted, so large logits do not overflow. dlogits = (softmax(z) - onehot) / B.
    Logits with NaN or infinity give a NaN loss (train_step refuses the step).
    """
    B, C = require_float_rows("logits", logits)
    wanted = "a sequence of %d class indices (ints in 0..%d)" % (B, C - 1)
    try:
        count = len(labels)
    except TypeError:
        raise ValueError("labels must be %s, got %s" % (wanted, type(labels).__name__))
    if count != B:
        raise ValueError("labels has %d entries, logits has %d rows: labels must be %s"
                         % (count, B, wanted))
    shifted = logits - np.max(logits, axis=1).reshape((B, 1))
    e = np.exp(shifted)
    sums = np.sum(e, axis=1)
    probs = e / sums.reshape((B, 1))
    total = 0.0
    for i in range(B):
        label = labels[i]
        if not _class_index(label, C):
            raise ValueError("label %r at row %d is not a class index in 0..%d" % (label, i, C - 1))
        label = int(label)
        total += math.log(sums[i]) - shifted[i, label]
        probs[i, label] -= 1.0
    probs *= 1.0 / B
    return total / B, probs


def _class_index(label, classes):
    """Whether label is an integral number in 0..classes-1 (an int, or a float such as 2.0)."""
    if isinstance(label, bool) or not isinstance(label, (int, float)) or label - label != 0:
        return False
    return label == int(label) and 0 <= label < classes
