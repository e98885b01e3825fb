"""Float64 reference of a Sequential model described by the device's config(): forward and
backward through its layers, each kind's by its module (layers.py, attention.py, encoder.py).

Parameters are a dict named as on the device: "<layer index>.<name>", e.g. "0.W", "3.Wq".
"""

from . import encoder
from .attention import attention_backward, attention_forward
from .layers import (ATTENTION_PARAMS, activation_backward, activation_forward, dense_backward,
                     dense_forward, gap_backward, gap_forward, tokens_backward, tokens_forward)


def layer_params(params, index, names):
    """{name: params["<index>.<name>"]} for the names present (absent ones are None)."""
    return {n: params.get("%d.%s" % (index, n)) for n in names}


def sequential_forward(config, params, x, mask=None):
    """Run the layers of `config` (the device's Sequential.config()); returns (y, caches).
    `mask` (B, S) of 0/1 (0 = padding) goes to attention, encoder layers and pooling."""
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
                                         spec[2], spec[3], mask=mask)
            caches[-1] = cache
        elif kind == "GlobalAvgPool":
            x, caches[-1] = gap_forward(x, spec[1], mask), mask
        elif kind in encoder.KINDS:
            enc = encoder
            x, caches[-1] = enc.layer_forward(
                spec, layer_params(params, i, enc.layer_param_names(spec)), x, mask)
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
            grad_out = gap_backward(grad_out, spec[1], cache)
        elif kind in encoder.KINDS:
            enc = encoder
            grad_out, g = enc.layer_backward(
                spec, layer_params(params, i, enc.layer_param_names(spec)), cache, grad_out)
            grads.update(("%d.%s" % (i, n), v) for n, v in g.items())
        else:
            raise ValueError("unknown layer kind %r" % (kind,))
    return grad_out, grads
