"""The parameters of every layer kind, from its config entry [kind, *args]: names and shapes.

Plain Python (no ulab, no micropython): the device checks a saved file against it before it
builds a model (store), and the host reads PyTorch state dicts with it (tinyattn_host.statedict
loads this very file). Each function checks its arguments (ValueError naming the problem) and
allocates nothing.
"""

ACTIVATIONS = ("relu", "gelu", "tanh", "sigmoid")  # Activation's kinds
ENCODER_ACTIVATIONS = ("relu", "gelu")  # TransformerEncoderLayer's


def config_args(kind, args, required, optional=()):
    """args of a config entry, completed with the defaults of `optional` ((name, default)
    pairs); ValueError naming the arguments when there are too few or too many."""
    names = list(required) + [name for name, _ in optional]
    if not len(required) <= len(args) <= len(names):
        raise ValueError("must be [%r, %s]" % (kind, ", ".join(names)))
    return list(args) + [default for _, default in optional[len(args) - len(required):]]


def flags(*values):
    """The values, checked to be True or False (switches in a config); ValueError otherwise."""
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


def probability(dropout):
    """A dropout probability, checked to be a number in [0, 1); ValueError otherwise."""
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or \
            not 0.0 <= dropout < 1.0:
        raise ValueError("dropout must be in [0, 1), got %r" % (dropout,))
    return dropout


def dense(*args):
    """W (out, in), then b (out,) when use_bias."""
    n_in, n_out, use_bias = config_args("Dense", args, ("in_features", "out_features"),
                                        (("use_bias", True),))
    dims(n_in, n_out)
    flags(use_bias)
    return [("W", (n_out, n_in))] + ([("b", (n_out,))] if use_bias else [])


def activation(*args):
    kind, = config_args("Activation", args, ("kind",))
    if kind not in ACTIVATIONS:
        raise ValueError("activation kind must be one of %s, got %r"
                         % (", ".join(ACTIVATIONS), kind))
    return []


def tokens(*args):
    dims(*config_args("Tokens", args, ("seq_len",)))
    return []


def global_avg_pool(*args):
    dims(*config_args("GlobalAvgPool", args, ("seq_len",)))
    return []


def self_attention(*args):
    """Wq, Wk, Wv, Wo (E, E), then bq, bk, bv, bo (E,) when use_bias."""
    embed_dim, num_heads, seq_len, use_bias, dropout, checkpoint = config_args(
        "SelfAttention", args, ("embed_dim", "num_heads", "seq_len"),
        (("use_bias", True), ("dropout", 0.0), ("checkpoint", False)))
    dims(embed_dim, num_heads, seq_len)
    flags(use_bias, checkpoint)
    probability(dropout)
    if embed_dim % num_heads:
        raise ValueError("embed_dim %d is not divisible by num_heads %d" % (embed_dim, num_heads))
    E = embed_dim
    return [("W" + n, (E, E)) for n in "qkvo"] + (
        [("b" + n, (E,)) for n in "qkvo"] if use_bias else [])


def layer_norm(*args):
    """gamma and beta, (E,) each."""
    normalized_shape, eps = config_args("LayerNorm", args, ("normalized_shape",),
                                        (("eps", 1e-5),))
    dims(normalized_shape)
    if not isinstance(eps, float) or not 0.0 < eps < 1.0:
        raise ValueError("eps must be a float in (0, 1), got %r" % (eps,))
    return [("gamma", (normalized_shape,)), ("beta", (normalized_shape,))]


def positional_embedding(*args):
    """P (seq_len, embed_dim)."""
    return [("P", dims(*config_args("PositionalEmbedding", args, ("seq_len", "embed_dim"))))]


def gelu(*args):
    config_args("Gelu", args, ())
    return []


def encoder_layer(*args):
    """Its parts' parameters, named "<part>.<name>" as collect_params() names them."""
    d_model, nhead, dim_feedforward, dropout, act, norm_first, eps, seq_len, causal = config_args(
        "TransformerEncoderLayer", args, ("d_model", "nhead", "dim_feedforward"),
        (("dropout", 0.0), ("activation", "relu"), ("norm_first", False),
         ("layer_norm_eps", 1e-5), ("seq_len", None), ("causal", False)))
    E, F = dims(d_model, dim_feedforward)
    flags(norm_first, causal)
    if act not in ENCODER_ACTIVATIONS:
        raise ValueError("activation must be one of %s, got %r" % (ENCODER_ACTIVATIONS, act))
    if seq_len is not None:
        dims(seq_len)
    probability(dropout)
    parts = (("self_attn", self_attention(E, nhead, seq_len or 1)),
             ("linear1", dense(E, F)), ("linear2", dense(F, E)),
             ("norm1", layer_norm(E, eps)), ("norm2", layer_norm(E, eps)))
    return [(part + "." + name, shape) for part, shapes in parts for name, shape in shapes]


SHAPES = {
    "Dense": dense, "Activation": activation, "Tokens": tokens, "SelfAttention": self_attention,
    "GlobalAvgPool": global_avg_pool, "LayerNorm": layer_norm,
    "PositionalEmbedding": positional_embedding, "Gelu": gelu,
    "TransformerEncoderLayer": encoder_layer,
}
"""Every layer kind -> its [(name, shape)] function (the kinds of layer.KINDS)."""


def layer_shapes(spec):
    """[(name, shape)] of one config entry [kind, *args]; ValueError when it is not valid."""
    if not isinstance(spec, (list, tuple)) or not spec:
        raise ValueError("a layer config must be [kind, *args]")
    shapes = SHAPES.get(spec[0]) if isinstance(spec[0], str) else None
    if shapes is None:
        raise ValueError("unknown layer kind %r in the model config (known: %s)"
                         % (spec[0], ", ".join(sorted(SHAPES))))
    return shapes(*spec[1:])


def model_shapes(config):
    """[(name, shape)] of the parameters a Sequential of `config` has, named as its
    collect_params() names them; ValueError naming the config entry that is not valid."""
    if not isinstance(config, (list, tuple)) or not config:
        raise ValueError("the model config must be a non-empty list of layer entries, got %r"
                         % (config,))
    shapes = []
    for i, spec in enumerate(config):
        try:
            for name, shape in layer_shapes(spec):
                shapes.append(("%d.%s" % (i, name), shape))
        except (TypeError, ValueError) as err:
            raise ValueError("config entry %d: %r: %s" % (i, spec, err))
    return shapes
