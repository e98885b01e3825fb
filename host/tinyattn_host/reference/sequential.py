"""The reference of a whole Sequential model, float64 and int8, through the kinds table
(kinds.py): each layer runs as its kind's module declares it (layers.py, attention.py,
encoder.py, which this module imports so that every kind is declared).

Float parameters are a dict named as on the device: "<layer index>.<name>", e.g. "0.W",
"3.Wq". The int8 model is the device's QSequential description()["layers"] and its arrays.
"""

from . import attention, decoder, encoder, layers  # noqa: F401  (they declare their kinds)
from .kinds import KINDS, full_entry, kind, layer_params, takes_mask


def sequential_forward(config, params, x, mask=None, keeps=None):
    """Run the layers of `config` (the device's Sequential.config()); returns (y, caches).
    `mask` (B, S) of 0/1 (0 = padding) goes to attention, encoder layers and pooling.
    `keeps` {layer index: keep masks}: a training forward of those layers with their dropout,
    from the masks the device drew (encoder.encoder_forward's `keeps`)."""
    caches = []
    for i, spec in enumerate(config):
        spec = full_entry(spec)  # a file may leave out arguments that have defaults
        k = kind(spec[0])
        p = layer_params(params, i, spec)
        extra = {"keeps": keeps[i]} if keeps and i in keeps else {}
        if mask is not None and takes_mask(spec[0]):
            x, cache = k.forward(spec, p, x, mask, **extra)
        else:
            x, cache = k.forward(spec, p, x, **extra)
        caches.append(cache)
    return x, caches


def sequential_backward(config, params, caches, grad_out):
    """Backward through the layers of `config`; returns (dx, grads named like params)."""
    grads = {}
    for i in range(len(config) - 1, -1, -1):
        spec = full_entry(config[i])
        grad_out, g = kind(spec[0]).backward(spec, layer_params(params, i, spec), caches[i],
                                             grad_out)
        grads.update(("%d.%s" % (i, n), v) for n, v in g.items())
    return grad_out, grads


def int8_layers(specs, arrays):
    """The int8 layer dicts `int8_forward` runs, from the device's int8 layer specs and their
    arrays by name ("<index>.<name>", "<index>.<part>.<name>" for a layer's parts)."""
    return [_int8(spec["kind"])[0](spec, arrays, "%d." % i) for i, spec in enumerate(specs)]


def int8_forward(x, int8_model, mask=None):
    """Run int8_layers' dicts on int8 x, bit for bit as the device; the list of outputs.
    `mask` (B, S) of 0/1 (0 = padding) goes to attention, encoder layers and pooling."""
    outputs = []
    for layer in int8_model:
        run = _int8(layer["kind"])[1]
        if mask is not None and takes_mask(layer["kind"]):
            x = run(x, layer, mask)
        else:
            x = run(x, layer)
        outputs.append(x)
    return outputs


def _int8(name):
    found = kind(name).int8
    if found is None:
        raise ValueError("layer kind %r has no int8 layer of its own (the device quantizes it "
                         "into %r)" % (name, KINDS[name].int8_as))
    return found
