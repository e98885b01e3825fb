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
    try:
        count = len(labels)
    except TypeError:  # None, a number: no sequence
        count = -1
    if count != B:
        raise ValueError("labels must be a sequence of %d class indices (ints in 0..%d), got %s"
                         % (B, C - 1, "%d entries for %d rows" % (count, B) if count >= 0
                            else type(labels).__name__))
    shifted = logits - np.max(logits, axis=1).reshape((B, 1))
    e = np.exp(shifted)
    sums = np.sum(e, axis=1)
    probs = e / sums.reshape((B, 1))
    total = 0.0
    for i in range(B):
        label = labels[i]
        # an int, or an integral float such as 2.0 (not NaN, infinity, a bool or a str)
        if isinstance(label, bool) or not (isinstance(label, int) or isinstance(label, float)) \
                or label - label != 0 or label != int(label) or not 0 <= label < C:
            raise ValueError("label %r at row %d is not a class index in 0..%d" % (label, i, C - 1))
        label = int(label)
        total += math.log(sums[i]) - shifted[i, label]
        probs[i, label] -= 1.0
    probs *= 1.0 / B
    return total / B, probs
