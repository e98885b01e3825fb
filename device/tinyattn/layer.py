"""The contract of a float layer, and the one registry that builds layers from a config.

Every layer has `forward(x, training=False)` and `backward(grad_out)` (the gradient of its
input; gradients of parameters accumulate, +=), `collect_params()` -> [(name, param, grad)],
`zero_grad()`, `config()` -> [kind, *constructor arguments] and `clear_caches()`, which drops
what forward kept for backward. `Layer` gives the defaults of a layer without parameters.
"""

KINDS = {
    "Dense": "layers", "Activation": "layers", "Tokens": "layers", "SelfAttention": "layers",
    "GlobalAvgPool": "layers", "LayerNorm": "layernorm", "PositionalEmbedding": "positional",
    "Gelu": "gelu", "TransformerEncoderLayer": "encoder",
}
"""Every layer kind a config may name -> the module of tinyattn that defines its class (imported
on first use, so a model pays the heap of the modules it uses only)."""


class Layer:
    """Defaults: no parameters, nothing cached. `seeded`: the constructor takes seed=.

    Each kind of KINDS also has `param_shapes(*args)`, a static method: [(name, shape)] of the
    parameters the layer of config [kind, *args] has, with its arguments checked and nothing
    allocated (store checks a file against it before it builds the model)."""

    seeded = False

    def collect_params(self):
        """The (name, param, grad) groups an optimizer updates."""
        return []

    def zero_grad(self):
        """Set every gradient to zero."""
        for _, _, grad in self.collect_params():
            grad[:] = 0.0

    def clear_caches(self):
        """Drop what the last forward kept for backward."""


def layer_class(kind):
    """The class of a config kind (its module imported now); ValueError for an unknown one."""
    module = KINDS.get(kind) if isinstance(kind, str) else None
    if module is None:
        raise ValueError("unknown layer kind %r in the model config (known: %s)"
                         % (kind, ", ".join(sorted(KINDS))))
    return getattr(__import__("tinyattn." + module, None, None, [kind]), kind)


def config_args(kind, args, required, optional=()):
    """args of a config entry, completed with the defaults of `optional` ((name, default)
    pairs); ValueError naming the arguments when there are too few or too many."""
    names = list(required) + [name for name, _ in optional]
    if not len(required) <= len(args) <= len(names):
        raise ValueError("must be [%r, %s]" % (kind, ", ".join(names)))
    return list(args) + [default for _, default in optional[len(args) - len(required):]]


def flags(*values):
    """The values, checked to be bools (switches in a config); ValueError otherwise."""
    for v in values:
        if not isinstance(v, bool):
            raise ValueError("switches must be True or False, got %r" % (v,))
    return values


def dims(*values):
    """The values, checked to be ints >= 1 (sizes in a config); ValueError otherwise."""
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError("sizes must be ints >= 1, got %r" % (v,))
    return values


def param_shapes(config):
    """[(name, shape)] of the parameters a Sequential of `config` has, named as its
    collect_params() names them; ValueError naming the config entry that is not valid."""
    if not isinstance(config, (list, tuple)) or not config:
        raise ValueError("the model config must be a non-empty list of layer entries, got %r"
                         % (config,))
    shapes = []
    for i, spec in enumerate(config):
        try:
            if not isinstance(spec, (list, tuple)) or not spec:
                raise ValueError("a layer config must be [kind, *args]")
            for name, shape in layer_class(spec[0]).param_shapes(*spec[1:]):
                shapes.append(("%d.%s" % (i, name), shape))
        except (TypeError, ValueError) as err:
            raise ValueError("config entry %d: %r: %s" % (i, spec, err))
    return shapes


def build(spec, rng):
    """The layer of one config entry [kind, *args]; a seeded one takes seed=rng.next32()."""
    if not isinstance(spec, (list, tuple)) or not spec or not isinstance(spec[0], str):
        raise ValueError("a layer config must be [kind, *args], got %r" % (spec,))
    cls = layer_class(spec[0])
    if cls.seeded:
        return cls(*spec[1:], seed=rng.next32())
    return cls(*spec[1:])
