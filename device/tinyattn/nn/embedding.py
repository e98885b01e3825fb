"""Token embedding and the classifier of a language model (which may use the embedding's
weights: a tied classifier)."""

import math

from ulab import numpy as np

from .attention import add_product
from .checks import require_2d
from .layer import Layer
from ..rng import Rng


def token_ids(x, vocab):
    """A list of ints in [0, vocab) from a list of token ids or a (rows, 1) array of them;
    ValueError naming the first that is not one."""
    if hasattr(x, "shape"):
        require_2d("token ids", x, 1)
        x = [x[i, 0] for i in range(x.shape[0])]
    if not isinstance(x, (list, tuple)) or not x:
        raise ValueError("token ids must be a non-empty list of ints, got %r" % (x,))
    ids = []
    for t in x:
        i = int(t) if isinstance(t, float) and t == int(t) else t
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < vocab:
            raise ValueError("token id %r is not in [0, %d)" % (t, vocab))
        ids.append(i)
    return ids


class Embedding(Layer):
    """Embedding(num_embeddings, embedding_dim, seed=None): token id t -> row t of W
    (num_embeddings, embedding_dim), as nn.Embedding; W uniform in [-0.1, 0.1) from `seed`.
    forward takes a list of ids (or a (rows, 1) array of them)."""

    PARAMS = ("W",)

    def __init__(self, *args, seed=None, **named):
        self.num_embeddings, self.embedding_dim = self.arguments(args, named)
        self.W = Rng(seed).uniform_matrix(self.num_embeddings, self.embedding_dim, -0.1, 0.1)
        self.dW = None
        self.ids_cache = None

    def forward(self, x, training=False):
        """(len(ids), embedding_dim): the rows of the ids."""
        ids = token_ids(x, self.num_embeddings)
        out = np.zeros((len(ids), self.embedding_dim))
        for r in range(len(ids)):
            out[r, :] = self.W[ids[r], :]
        self.ids_cache = ids if training else None
        return out

    def backward(self, grad_out):
        """dW's row of each id += that position's gradient; returns None (ids have none)."""
        ids = self.ids_cache
        if ids is None:
            raise ValueError("backward() called before forward(x, training=True)")
        self.collect_params()
        for r in range(len(ids)):
            row = self.dW[ids[r]:ids[r] + 1, :]
            row += grad_out[r:r + 1, :]
        self.ids_cache = None
        return None

    def clear_caches(self):
        self.ids_cache = None


class Classifier(Layer):
    """Classifier(dim, vocab_size, tied=False, seed=None): logits = x W^T, W (vocab_size,
    dim), Xavier-uniform from `seed`; tied: W is the model's Embedding's (llama2.c's shared
    classifier), found when the Sequential is made (bind) and updated through it."""

    PARAMS = ("W",)

    def __init__(self, *args, seed=None, **named):
        self.dim, self.vocab_size, self.tied = self.arguments(args, named)
        self.embedding = None
        bound = math.sqrt(6.0 / (self.dim + self.vocab_size))
        self.W = None if self.tied else Rng(seed).uniform_matrix(
            self.vocab_size, self.dim, -bound, bound)
        self.dW = None
        self.x_cache = None

    def bind(self, layers):
        """A tied classifier takes the Embedding among `layers` (Sequential calls this)."""
        if self.tied:
            found = [layer for layer in layers if isinstance(layer, Embedding)]
            if len(found) != 1 or found[0].W.shape != (self.vocab_size, self.dim):
                raise ValueError("a tied Classifier(%d, %d) needs one Embedding(%d, %d) in "
                                 "the model" % ((self.dim, self.vocab_size) * 2))
            self.embedding = found[0]

    def _weights(self):
        if not self.tied:
            return self.W
        if self.embedding is None:
            raise ValueError("a tied Classifier works inside a Sequential with its Embedding")
        return self.embedding.W

    def forward(self, x, training=False):
        """x (rows, dim) to logits (rows, vocab_size)."""
        require_2d("x", x, self.dim)
        self.x_cache = x if training else None
        return np.dot(x, self._weights().transpose())

    def backward(self, grad_out):
        """dW (the embedding's dW when tied) += grad_out^T x; returns grad_out W."""
        if self.x_cache is None:
            raise ValueError("backward() called before forward(x, training=True)")
        owner = self.embedding if self.tied else self
        owner.collect_params()
        add_product(owner.dW, grad_out, self.x_cache)
        self.x_cache = None
        return np.dot(grad_out, self._weights())

    def clear_caches(self):
        self.x_cache = None
