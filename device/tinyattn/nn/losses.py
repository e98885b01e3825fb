"""Softmax cross-entropy for classification."""

import math

from ulab import numpy as np

from .checks import require_2d


def cross_entropy(logits, labels):
    """Mean softmax cross-entropy of logits (B, C) for integer labels; returns (loss, dlogits).

    loss = mean_b(log(sum_c exp(z_bc)) - z_b,label_b), computed with the row maximum
    subtracted, so large logits do not overflow. dlogits = (softmax(z) - onehot) / B.
    """
    B, C = require_2d("logits", logits)
    if len(labels) != B:
        raise ValueError("labels has %d entries, logits has %d rows" % (len(labels), B))
    shifted = logits - np.max(logits, axis=1).reshape((B, 1))
    e = np.exp(shifted)
    sums = np.sum(e, axis=1)
    probs = e / sums.reshape((B, 1))
    total = 0.0
    for i in range(B):
        label = labels[i]
        if label != int(label) or not 0 <= label < C:
            raise ValueError("label %r at row %d is not a class index in 0..%d" % (label, i, C - 1))
        label = int(label)
        total += math.log(sums[i]) - shifted[i, label]
        probs[i, label] -= 1.0
    probs *= 1.0 / B
    return total / B, probs
