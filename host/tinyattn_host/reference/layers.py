"""Float64 NumPy reference of the layers around Attention: Dense, activations, Tokens,
GlobalAvgPool, cross-entropy, and a Sequential model described by the device's config().

Backward passes are written out by hand (tests check them against finite differences).
Parameters are a dict named as on the device: "<layer index>.<name>", e.g. "0.W", "3.Wq".
"""

import numpy as np

from .attention import attention_backward, attention_forward

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


def layer_params(params, index, names):
    """{name: params["<index>.<name>"]} for the names present (absent ones are None)."""
    return {n: params.get("%d.%s" % (index, n)) for n in names}


def sequential_forward(config, params, x):
    """Run the layers of `config` (the device's Sequential.config()); returns (y, caches)."""
    caches = []
    for i, spec in enumerate(config):
        kind = spec[0]
        caches.append(x)
        if kind == "Dense":
            p = layer_params(params, i, ("W", "b"))
            x = dense_forward(x, p["W"], p["b"])
        elif kind == "Activation":
            x = activation_forward(x, spec[1])
        elif kind == "Tokens":
            x = tokens_forward(x, spec[1])
        elif kind == "SelfAttention":
            x, cache = attention_forward(x, layer_params(params, i, ATTENTION_PARAMS),
                                         spec[2], spec[3])
            caches[-1] = cache
        elif kind == "GlobalAvgPool":
            x = gap_forward(x, spec[1])
        elif kind in _encoder().KINDS:
            enc = _encoder()
            x, caches[-1] = enc.layer_forward(
                spec, layer_params(params, i, enc.layer_param_names(spec)), x)
        else:
            raise ValueError("unknown layer kind %r" % (kind,))
    return x, caches


def sequential_backward(config, params, caches, grad_out):
    """Backward through the layers of `config`; returns (dx, grads named like params)."""
    grads = {}
    for i in range(len(config) - 1, -1, -1):
        spec, cache = config[i], caches[i]
        kind = spec[0]
        if kind == "Dense":
            p = layer_params(params, i, ("W", "b"))
            grad_out, grads["%d.W" % i], db = dense_backward(grad_out, cache, p["W"], p["b"])
            if db is not None:
                grads["%d.b" % i] = db
        elif kind == "Activation":
            grad_out = activation_backward(grad_out, cache, spec[1])
        elif kind == "Tokens":
            grad_out = tokens_backward(grad_out, spec[1])
        elif kind == "SelfAttention":
            g = attention_backward(grad_out, layer_params(params, i, ATTENTION_PARAMS), cache)
            grad_out = g["dx"]
            for name in ATTENTION_PARAMS:
                if g["d" + name] is not None:
                    grads["%d.%s" % (i, name)] = g["d" + name]
        elif kind == "GlobalAvgPool":
            grad_out = gap_backward(grad_out, spec[1])
        elif kind in _encoder().KINDS:
            enc = _encoder()
            grad_out, g = enc.layer_backward(
                spec, layer_params(params, i, enc.layer_param_names(spec)), cache, grad_out)
            grads.update(("%d.%s" % (i, n), v) for n, v in g.items())
        else:
            raise ValueError("unknown layer kind %r" % (kind,))
    return grad_out, grads


def _encoder():
    """reference/encoder.py (LayerNorm, PositionalEmbedding, TransformerEncoderLayer), which
    imports this module: imported on first use."""
    from . import encoder

    return encoder
