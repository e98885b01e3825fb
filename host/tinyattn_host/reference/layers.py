"""Float64 NumPy reference of the layers around Attention: Dense, activations, Tokens,
GlobalAvgPool, and cross-entropy (a whole Sequential: sequential.py).

Backward passes are written out by hand (tests check them against finite differences).
Parameters are a dict named as on the device: "<layer index>.<name>", e.g. "0.W", "3.Wq".
"""

import numpy as np

from . import int8
from .kinds import declare

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


def gap_forward(x, seq_len, mask=None):
    """(B*S, E) -> (B, E): the mean of each sequence's tokens, or of its kept tokens with a
    (B, S) 0/1 padding mask: sum(mask[b, s] x[b, s]) / sum(mask[b])."""
    rows, E = x.shape
    tokens = x.reshape(rows // seq_len, seq_len, E)
    if mask is None:
        return tokens.mean(axis=1)
    weights = _pool_weights(mask, rows // seq_len, seq_len)
    return (tokens * weights[:, :, None]).sum(axis=1)


def gap_backward(grad_out, seq_len, mask=None):
    """Every token of sequence b gets grad_out[b] / S, or grad_out[b] mask[b, s] / n_b."""
    if mask is None:
        return np.repeat(grad_out / seq_len, seq_len, axis=0)
    weights = _pool_weights(mask, grad_out.shape[0], seq_len)
    return (grad_out[:, None, :] * weights[:, :, None]).reshape(-1, grad_out.shape[1])


def _pool_weights(mask, B, S):
    """mask / (its row sums), (B, S); ValueError for a bad mask or a row with no 1."""
    mask = np.asarray(mask, dtype=np.float64)
    if mask.shape != (B, S) or not np.all((mask == 0) | (mask == 1)):
        raise ValueError("mask must be (%d, %d) of 0 and 1, got %s" % (B, S, mask.shape))
    counts = mask.sum(axis=1, keepdims=True)
    if np.any(counts == 0):
        raise ValueError("a sequence has no kept token (a mask row of zeros)")
    return mask / counts


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


# ---- the kinds of this module (reference/kinds.py) ------------------------------------------
def _dense_backward(spec, p, x, grad_out):
    dx, dW, db = dense_backward(grad_out, x, p["W"], p.get("b"))
    return dx, {"W": dW} if db is None else {"W": dW, "b": db}


def _times_or_none(width, n):
    return None if width is None else width * n


def _dense_out_scale(q):
    """QDense.out_scale(): s_y, or its accumulator's s_x s_w (float32) without a multiplier."""
    from ..quantize.numbers import times

    return q["s_y"] if q["mult"] is not None else times(q["s_x"], q["s_w"])


declare("Dense", lambda spec, p, x: (dense_forward(x, p["W"], p.get("b")), x), _dense_backward,
        torch={"weight": ["W"], "bias": ["b"]}, int8=(int8.dense_layer, int8.dense_run),
        out_scale=_dense_out_scale, in_width=lambda q, after: q["in"],
        quantize="kinds.quantize_dense")
declare("Activation", lambda spec, p, x: (activation_forward(x, spec[1]), x),
        lambda spec, p, x, g: (activation_backward(g, x, spec[1]), {}),
        int8=(int8.activation_layer, int8.activation_run), quantize="kinds.quantize_activation")
declare("Tokens", lambda spec, p, x: (tokens_forward(x, spec[1]), None),
        lambda spec, p, cache, g: (tokens_backward(g, spec[1]), {}),
        int8=(int8.tokens_layer, int8.tokens_run), out_scale=lambda q: q["s_x"],
        in_width=lambda q, after: _times_or_none(after(), q["seq_len"]),
        quantize="kinds.quantize_tokens")
declare("GlobalAvgPool", lambda spec, p, x, mask=None: (gap_forward(x, spec[1], mask), mask),
        lambda spec, p, mask, g: (gap_backward(g, spec[1], mask), {}),
        int8=(int8.tokens_layer, int8.pool_run), quantize="kinds.quantize_pool")
