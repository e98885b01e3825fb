"""Padding masks (B, S) of 0/1 checked, and the weights of a mean over kept tokens.

Imported only by a call that has a mask, so a model without one pays none of its heap."""

from ulab import numpy as np


def require_mask(mask, B, S):
    """Check that mask is a (B, S) array of 0 and 1 with a 1 in every row; return the
    number of ones of each row, a list (counted exactly: ulab's sum along an axis is not)."""
    if getattr(mask, "shape", None) != (B, S):
        raise ValueError("mask must have shape (%d, %d) (batch, tokens), got %r"
                         % (B, S, getattr(mask, "shape", None)))
    counts = []
    for b in range(B):
        row = mask[b, :].tolist()
        ones = row.count(1.0)
        if ones + row.count(0.0) != S:
            raise ValueError("mask must hold only 0 (padding) and 1 (a real token)")
        if not ones:
            raise ValueError("sequence %d of the batch has no kept token (its mask row is all "
                             "0): nothing to average" % b)
        counts.append(ones)
    return counts



def masked_mean(flat, mask, B, S, E):
    """(y (B, E), share (B, S)) of the mean of each sequence's kept tokens: flat (B, S*E) is
    one sequence a row; share[b, s] = mask[b, s] / n_b, each token's weight (for backward)."""
    inv = np.zeros((B, 1))
    for b, n in enumerate(require_mask(mask, B, S)):
        inv[b, 0] = 1.0 / n
    y = np.zeros((B, E))
    for s in range(S):
        y += flat[:, s * E:(s + 1) * E] * mask[:, s:s + 1]
    y *= inv
    return y, mask * inv
