"""A learned positional embedding: one (S, E) table added to every sequence of a batch."""

import math

from ulab import numpy as np

from .layer import Layer
from ..rng import Rng
from .checks import require_2d, require_rows

INIT_STD = 0.02  # the table starts uniform with this standard deviation (as BERT and GPT-2)


class PositionalEmbedding(Layer):
    """PositionalEmbedding(seq_len, embed_dim, seed=None): y = x + P on each sequence, token s
    of every sequence gets row s of P (seq_len, E).

    P starts uniform in +-sqrt(3) * 0.02, drawn from `seed`.
    """

    PARAMS = ("P",)

    def __init__(self, *args, seed=None, **named):
        seq_len, embed_dim = self.arguments(args, named)
        self.seq_len, self.embed_dim = seq_len, embed_dim
        bound = math.sqrt(3.0) * INIT_STD
        self.P = Rng(seed).uniform_matrix(seq_len, embed_dim, -bound, bound)
        self.dP = None  # made on first need (layer.py)
        self._batch = None

    def forward(self, x, training=False):
        """x (B*S, E) to (B*S, E); a batch is one row a sequence, so P adds as one row."""
        self.grads_first(training)
        rows, E = require_2d("x", x, self.embed_dim)
        S = self.seq_len
        B = require_rows("x", rows, S)
        self._batch = B if training else None
        flat = x.reshape((B, S * E)) + self.P.reshape((S * E,))
        return flat.reshape((rows, E))

    def backward(self, grad_out):
        """dP += the sum of grad_out over the sequences; returns grad_out (dx = grad_out)."""
        B = self._batch
        if B is None:
            raise ValueError("backward() called before forward(x, training=True)")
        S, E = self.seq_len, self.embed_dim
        shape = getattr(grad_out, "shape", None)
        if shape != (B * S, E):
            raise ValueError("grad_out must have shape %r, got %r" % ((B * S, E), shape))
        self.collect_params()  # the gradient buffer, made the first time
        self.dP += np.sum(grad_out.reshape((B, S * E)), axis=0).reshape((S, E))
        return grad_out

    def clear_caches(self):
        """Forget the last batch size."""
        self._batch = None
