"""Padding masks: which tokens of each sequence are real, as 0/1 arrays (what attention does
with them, and with causal masks, is nn/sdpa.py's)."""

from ulab import numpy as np


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
