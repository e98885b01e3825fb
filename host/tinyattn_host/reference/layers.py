"""Float64 NumPy reference of the layers around Attention: Dense, activations, Tokens,
GlobalAvgPool, and cross-entropy (a whole Sequential: sequential.py).

Backward passes are written out by hand (tests check them against finite differences).
Parameters are a dict named as on the device: "<layer index>.<name>", e.g. "0.W", "3.Wq".
"""

import numpy as np

GELU_C = np.sqrt(2.0 / np.pi)
GELU_A = 0.044715
ACTIVATIONS = ("relu", "gelu_tanh", "tanh", "sigmoid")  # "gelu": gelu_tanh's name before


def dense_forward(x, W, b):
    """y = x W^T + b (b may be None)."""
    y = x @ W.T
    return y if b is None else y + b


def dense_backward(grad_out, x, W, b):
    """(dx, dW, db) of y = x W^T + b; db is None without a bias."""
    return grad_out @ W, grad_out.T @ x, None if b is None else grad_out.sum(axis=0)


def activation_forward(x, kind):
    """relu, gelu_tanh (GELU's tanh approximation), tanh or sigmoid, elementwise."""
    if kind == "relu":
        return np.maximum(x, 0.0)
    if kind in ("gelu_tanh", "gelu"):
        return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_A * x ** 3)))
    if kind == "tanh":
        return np.tanh(x)
    if kind == "sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    raise ValueError("activation kind must be one of %s, got %r" % (ACTIVATIONS, kind))


def activation_backward(grad_out, x, kind):
    """grad_out times the activation's derivative at x."""
    if kind == "relu":
        return grad_out * (x > 0)
    if kind in ("gelu_tanh", "gelu"):
        u = GELU_C * (x + GELU_A * x ** 3)
        t = np.tanh(u)
        du = GELU_C * (1.0 + 3.0 * GELU_A * x ** 2)
        return grad_out * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t ** 2) * du)
    if kind == "tanh":
        return grad_out * (1.0 - np.tanh(x) ** 2)
    if kind == "sigmoid":
        s = 1.0 / (1.0 + np.exp(-x))
        return grad_out * s * (1.0 - s)
    raise ValueError("activation kind must be one of %s, got %r" % (ACTIVATIONS, kind))


def tokens_forward(x, seq_len):
    """(B, S*E) -> (B*S, E): row b's columns s*E:(s+1)*E become token row b*S + s."""
    B, cols = x.shape
    return x.reshape(B * seq_len, cols // seq_len)


def tokens_backward(grad_out, seq_len):
    """(B*S, E) -> (B, S*E)."""
    rows, E = grad_out.shape
    return grad_out.reshape(rows // seq_len, seq_len * E)


def gap_forward(x, seq_len):
    """(B*S, E) -> (B, E): the mean of each sequence's tokens."""
    rows, E = x.shape
    return x.reshape(rows // seq_len, seq_len, E).mean(axis=1)


def gap_backward(grad_out, seq_len):
    """Every token of sequence b gets grad_out[b] / S."""
    return np.repeat(grad_out / seq_len, seq_len, axis=0)


def cross_entropy(logits, labels):
    """(mean loss, dlogits) of softmax cross-entropy, stable (log-sum-exp with the max)."""
    labels = np.asarray(labels, dtype=int)
    B = logits.shape[0]
    z = logits - logits.max(axis=1, keepdims=True)
    log_sum = np.log(np.exp(z).sum(axis=1))
    loss = np.mean(log_sum - z[np.arange(B), labels])
    probs = np.exp(z - log_sum[:, None])
    probs[np.arange(B), labels] -= 1.0
    return loss, probs / B


ATTENTION_PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")
