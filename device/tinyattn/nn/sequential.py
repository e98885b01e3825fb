"""Sequential: layers applied in order, built from and saved as a config of layer entries."""

import gc

from ..rng import Rng
from .layer import Layer, build


class Sequential(Layer):
    """Layers applied in order; backward runs them in reverse. `layers` is a plain list."""

    def __init__(self, layers):
        self.layers = list(layers) if isinstance(layers, (list, tuple)) else None
        for layer in self.layers or [None]:
            if not all(hasattr(layer, m) for m in ("forward", "backward", "collect_params")):
                raise ValueError("layers must be a list of layers (Dense, SelfAttention, ...), "
                                 "got %r" % (layers,))
        for layer in self.layers:  # a layer that uses another's weights finds it (Classifier)
            if hasattr(layer, "bind"):
                layer.bind(self.layers)

    def forward(self, x, training=False, mask=None):
        """The output of the last layer. `mask` (B, S) of 0/1, 1 for a real token and 0 for
        padding (padding_mask(lengths, S)), goes to every layer that takes one (attention,
        encoder, pooling: their kinds' takes_mask, spec.py); the others work on every row,
        padded or not, as PyTorch's do."""
        if mask is not None:
            from .spec import takes_mask
        for layer in self.layers:
            if mask is None or not takes_mask(layer):
                x = layer.forward(x, training)
            else:
                x = layer.forward(x, training, mask)
        return x

    def logits(self, tokens):
        """A language model's (Embedding first) logits at every position of the list of token
        ids, (len(tokens), vocab): the full causal forward (tinyattn.generate steps instead)."""
        return self.forward(tokens)

    def backward(self, grad_out):
        """Backpropagate grad_out through every layer; returns the input's gradient."""
        for layer in reversed(self.layers):
            grad_out = layer.backward(grad_out)
        return grad_out

    def collect_params(self, grads=True):
        """(name, param, grad) of every layer, named "<layer index>.<name>", e.g. "0.W"
        (grads: see layer.Layer.collect_params)."""
        groups = []
        for i, layer in enumerate(self.layers):
            for name, param, grad in layer.collect_params(grads):
                groups.append(("%d.%s" % (i, name), param, grad))
        return groups

    def clear_caches(self):
        """Drop what every layer kept for backward."""
        for layer in self.layers:
            layer.clear_caches()

    def num_params(self):
        """How many numbers the parameters hold."""
        return sum(p.size for _, p, _ in self.collect_params(False))

    def config(self):
        """The list of the layers' configs."""
        return [layer.config() for layer in self.layers]

    @staticmethod
    def from_config(config, seed=None, fill=None):
        """A Sequential built from `config()` output (fresh weights from `seed`); ValueError
        naming the config entry that is not a valid one. fill(name, param), when given, is
        called for each parameter of a layer as soon as that layer is made (names as
        collect_params gives them), so a loader can free each array it copied in."""
        if not isinstance(config, (list, tuple)) or not config:
            raise ValueError("config must be a non-empty list of layer entries, got %r"
                             % (config,))
        rng = Rng(seed)
        layers = []
        for i, spec in enumerate(config):
            gc.collect()  # each layer's arrays go to the lowest free heap, not between garbage
            try:
                layers.append(build(spec, rng))
            except (TypeError, ValueError) as err:
                raise ValueError("config entry %d: %r: %s" % (i, spec, err))
            for name, param, _ in layers[-1].collect_params(False) if fill else ():
                fill("%d.%s" % (i, name), param)
        return Sequential(layers)

