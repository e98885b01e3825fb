"""Dense, Activation, Tokens, SelfAttention and GlobalAvgPool on ulab arrays.

Each keeps layer.Layer's contract; its arguments are declared in spec.py (its config() lists
them), so `Sequential.from_config` can build it again from its config (store.load uses it).
"""

import math

from ulab import numpy as np

from .attention import Attention, add_product
from .layer import Layer
from ..rng import Rng
from .checks import all_finite, require_2d, require_rows

GELU_C = math.sqrt(2.0 / math.pi)
GELU_A = 0.044715


class Dense(Layer):
    """Dense(in_features, out_features, use_bias=True, seed=None): y = x W^T + b,
    W (out_features, in_features), b (out_features,) or None.

    W is Xavier-uniform, U(-sqrt(6 / (in + out)), +sqrt(6 / (in + out))), drawn row by row
    from `seed`; b starts at zero.
    """

    PARAMS = ("W", "b")

    def __init__(self, *args, seed=None, **named):
        in_features, out_features, use_bias = self.arguments(args, named)
        self.in_features = in_features
        self.out_features = out_features
        self.use_bias = use_bias
        rng = Rng(seed)
        bound = math.sqrt(6.0 / (in_features + out_features))
        self.W = rng.uniform_matrix(out_features, in_features, -bound, bound)
        self.b = np.zeros(out_features) if use_bias else None
        self.dW = self.db = None  # made on first need (layer.py)
        self.x_cache = None

    def forward(self, x, training=False):
        """x (B, in_features) to (B, out_features); training=True keeps x for backward."""
        self.grads_first(training)
        require_2d("x", x, self.in_features)
        self.x_cache = x if training else None
        y = np.dot(x, self.W.transpose())
        if self.b is not None:
            y += self.b
        return y

    def backward(self, grad_out):
        """dW += grad_out^T x, db += column sums of grad_out; returns dx = grad_out W."""
        x = _cached(self.x_cache)
        _require_shape("grad_out", grad_out, (x.shape[0], self.out_features))
        self.collect_params()  # the gradient buffers, made the first time
        add_product(self.dW, grad_out, x)
        if self.db is not None:
            self.db += np.sum(grad_out, axis=0)
        return np.dot(grad_out, self.W)

    def clear_caches(self):
        """Drop the input kept for backward."""
        self.x_cache = None


class Activation(Layer):
    """Activation(kind): elementwise 'relu', 'gelu_tanh', 'tanh' or 'sigmoid'.

    gelu_tanh(x) = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GELU's tanh approximation
    (Gelu is the erf form; "gelu", this kind's name before, still loads as gelu_tanh);
    sigmoid(x) = (1 + tanh(x/2)) / 2, which cannot overflow.
    """

    def __init__(self, *args, **named):
        self.kind, = self.arguments(args, named)
        self.x_cache = self.y_cache = None

    def forward(self, x, training=False):
        """The activation of every element of x (any 2-D shape)."""
        require_2d("x", x)
        kind = self.kind
        if kind == "relu":
            # ulab's maximum turns NaN into 0: where x holds one, NaN * False keeps it
            y = np.maximum(x, 0.0) if all_finite(x) else x * (x > 0.0)
        elif kind == "gelu_tanh":
            y = x * (np.tanh(GELU_C * (x + GELU_A * x * x * x)) + 1.0) * 0.5
        elif kind == "tanh":
            y = np.tanh(x)
        else:
            y = (np.tanh(x * 0.5) + 1.0) * 0.5
        # relu, tanh and sigmoid need only y for their slope, gelu only x: keep one
        if not training:
            self.x_cache = self.y_cache = None
        elif kind == "gelu_tanh":
            self.x_cache, self.y_cache = x, None
        else:
            self.x_cache, self.y_cache = None, y
        return y

    def backward(self, grad_out):
        """grad_out times the derivative at the cached input."""
        x, y = self.x_cache, self.y_cache
        _require_shape("grad_out", grad_out, _cached(y if x is None else x).shape)
        kind = self.kind
        if kind == "relu":
            return grad_out * (y > 0.0)
        if kind == "gelu_tanh":
            x2 = x * x
            t = np.tanh(GELU_C * (x + GELU_A * x2 * x))
            slope = (t + 1.0) * 0.5 + x * (1.0 - t * t) * (GELU_C * 0.5) * (1.0 + 3.0 * GELU_A * x2)
            return grad_out * slope
        if kind == "tanh":
            return grad_out * (1.0 - y * y)
        return grad_out * y * (1.0 - y)

    def clear_caches(self):
        """Drop the input or output kept for backward."""
        self.x_cache = self.y_cache = None


class Tokens(Layer):
    """Tokens(seq_len): (B, S*E) to (B*S, E), each row split into `seq_len` tokens, the same
    memory (a view)."""

    def __init__(self, *args, **named):
        self.seq_len, = self.arguments(args, named)
        self._batch = None

    def forward(self, x, training=False):
        """A reshape of x to (B*seq_len, cols/seq_len): no copy when x is dense."""
        rows, cols = require_2d("x", x)
        if cols % self.seq_len:
            raise ValueError("x has %d columns, not a multiple of seq_len %d"
                             % (cols, self.seq_len))
        self._batch = rows if training else None
        return x.reshape((rows * self.seq_len, cols // self.seq_len))

    def backward(self, grad_out):
        """The gradient reshaped back to (B, S*E)."""
        B = _cached(self._batch)
        rows, cols = require_2d("grad_out", grad_out)
        _require_shape("grad_out", grad_out, (B * self.seq_len, cols))
        return grad_out.reshape((B, self.seq_len * cols))


class SelfAttention(Attention):
    """SelfAttention(embed_dim, num_heads, seq_len, use_bias=True, dropout=0.0,
    checkpoint=False, num_kv_heads=None, seed=None): Attention over sequences of a fixed
    `seq_len`, as one step of a Sequential (num_kv_heads: grouped-query heads, Attention's).

    Same weights, caches, dropout, checkpointing and backward as Attention; forward(x,
    training, mask) passes seq_len (and the padding mask: padded keys are never attended to).
    """

    def __init__(self, *args, seed=None, **named):
        (embed_dim, num_heads, seq_len, use_bias, dropout, checkpoint,
         num_kv_heads) = self.arguments(args, named)
        super().__init__(embed_dim, num_heads, use_bias=use_bias, dropout=dropout,
                         checkpoint=checkpoint, seed=seed, num_kv_heads=num_kv_heads)
        self.seq_len = seq_len

    def forward(self, x, training=False, mask=None):
        """Self-attention over x (B*seq_len, E): returns (B*seq_len, E); mask (B, seq_len)."""
        return Attention.forward(self, x, self.seq_len, mask=mask, training=training)

    def backward(self, grad_out):
        """Attention's backward; then the caches are dropped, so the heap holds one set."""
        dx = Attention.backward(self, grad_out)
        self.clear_caches()
        return dx

    def attention_map(self, index=0):
        """The (H*S, S) attention weights of sequence `index` in the last forward."""
        if self.A_cache is None:
            raise ValueError("no attention weights: set keep_weights = True (or train), "
                             "then call forward()")
        block = self.num_heads * self.seq_len
        if not 0 <= index < self.A_cache.shape[0] // block:
            raise ValueError("sequence index %r is outside the last batch" % (index,))
        return self.A_cache[index * block:(index + 1) * block, :]


class GlobalAvgPool(Layer):
    """GlobalAvgPool(seq_len): (B*S, E) to (B, E), the mean over each sequence's S tokens,
    or with a padding mask (B, S) of 0/1 over its kept tokens only (PyTorch users'
    (x * m).sum(1) / m.sum(1))."""

    def __init__(self, *args, **named):
        self.seq_len, = self.arguments(args, named)
        self._shape = self._share = None

    def forward(self, x, training=False, mask=None):
        """y[b] = (x[b*S] + ... + x[b*S + S-1]) / S, or sum(mask[b, s] x[b*S + s]) / n_b
        with n_b = sum(mask[b]) (at least 1: a sequence with no kept token is refused)."""
        rows, E = require_2d("x", x)
        S = self.seq_len
        B = require_rows("x", rows, S)
        self._shape = (B, E) if training else None
        self._share = None
        flat = x.reshape((B, S * E))  # row b holds the S tokens of sequence b
        if mask is not None:
            from .pooling_masks import masked_mean

            y, share = masked_mean(flat, mask, B, S, E)
            self._share = share if training else None
            return y
        y = np.zeros((B, E))
        for s in range(S):
            y += flat[:, s * E:(s + 1) * E]
        y *= 1.0 / S
        return y

    def backward(self, grad_out):
        """Token s of sequence b gets grad_out[b] / S, or grad_out[b] mask[b, s] / n_b."""
        B, E = _cached(self._shape)
        _require_shape("grad_out", grad_out, (B, E))
        S, share = self.seq_len, self._share
        dx = np.zeros((B, S * E))
        part = grad_out * (1.0 / S)
        for s in range(S):
            if share is not None:
                part = grad_out * share[:, s:s + 1]
            dx[:, s * E:(s + 1) * E] = part
        return dx.reshape((B * S, E))

    def clear_caches(self):
        """Drop the mask's weights kept for backward."""
        self._share = None


def _cached(value):
    if value is None:
        raise ValueError("backward() called before forward(x, training=True)")
    return value


def _require_shape(name, x, shape):
    got = getattr(x, "shape", None)
    if got != shape:
        raise ValueError("%s must have shape %r, got %r" % (name, shape, got))


