"""Attention masks: which keys a query may attend to (padding and causal), as 0/1 arrays."""

from ulab import numpy as np

MASKED_SCORE = -1e9
"""The score a masked key adds: its weight is 0 after the softmax."""


def causal_keep(S, S_kv):
    """1 where key j <= query i, else 0: (S, S_kv)."""
    keep = np.zeros((S, S_kv))
    for i in range(S):
        keep[i:i + 1, :i + 1] = 1.0
    return keep


def allowed(mask, b, causal_keep, S, S_kv):
    """(keep, penalty) for sequence b: keep the (S, S_kv) 0/1 keys it may attend to (a padding
    mask's row b, and the causal keep when given), penalty
    = (keep - 1) * 1e9 the score it adds; None when all keys are allowed."""
    if mask is None:
        if causal_keep is None:
            return None
        keep = causal_keep
    else:
        keep = np.zeros((S, S_kv)) + mask[b:b + 1, :]
        if causal_keep is not None:
            keep *= causal_keep
    return keep, (keep - 1.0) * -MASKED_SCORE


def padding_mask(lengths, seq_len):
    """A (B, seq_len) mask with 1 for the first lengths[b] tokens of sequence b, 0 after."""
    if not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError("seq_len must be an int >= 1, got %r" % (seq_len,))
    if not isinstance(lengths, (list, tuple)):
        raise ValueError("lengths must be a list of ints, got %r" % (lengths,))
    mask = np.zeros((len(lengths), seq_len))
    for b, n in enumerate(lengths):
        if not isinstance(n, int) or not 0 <= n <= seq_len:
            raise ValueError("each length must be an int in 0..%d, got %r" % (seq_len, n))
        if n:
            mask[b:b + 1, :n] = 1.0
    return mask
