"""A model config's shapes followed through every layer: what each layer takes and gives.

Plain Python (no ulab, no micropython), shared with the host (tinyattn_host.statedict checks a
PyTorch description with it before it writes anything). A sample is `tokens` rows of
`features` each: Tokens(S) splits each row into S, GlobalAvgPool(S) joins S rows into one.
The input is one row a sample, unless a layer that works on sequences (attention, positional,
pooling) comes before any Tokens: then the input rows are those sequences' tokens. The first
error is a ValueError naming the layer and both numbers. The entries' own arguments are
checked by params.py, not here.
"""


def _arg(spec, index, default=None):
    return spec[index] if len(spec) > index else default


def follow(config):
    """(input width, input rows a sample, (tokens, features) of the output) of a model
    config; input width None when no layer fixes it. ValueError at the first layer whose
    sizes disagree with what the layers before it give."""
    state = {"tokens": None, "features": None, "split": 1, "width": None, "rows": 1}
    for i, spec in enumerate(config):
        kind = spec[0]
        where = "layer %d (%s)" % (i, kind)
        if kind == "Tokens":
            _split(state, spec[1], where)
        elif kind == "Dense":
            _features(state, spec[1], where, "in_features")
            state["features"] = spec[2]
        elif kind == "LayerNorm":
            _features(state, spec[1], where, "normalized_shape")
        elif kind == "PositionalEmbedding":
            _tokens(state, spec[1], where, "seq_len")
            _features(state, spec[2], where, "embed_dim")
        elif kind == "SelfAttention":
            _features(state, spec[1], where, "embed_dim")
            _tokens(state, spec[3], where, "seq_len")
        elif kind == "TransformerEncoderLayer":
            _features(state, spec[1], where, "d_model")
            if _arg(spec, 8) is not None:
                _tokens(state, spec[8], where, "seq_len")
        elif kind == "GlobalAvgPool":
            _tokens(state, spec[1], where, "seq_len")
            state["tokens"] = 1
    return state["width"], state["rows"], (state["tokens"] or 1, state["features"])


def _split(state, seq_len, where):
    """Tokens(seq_len): each row becomes seq_len rows of features / seq_len."""
    features = state["features"]
    if features is None:
        state["split"] *= seq_len
    elif features % seq_len:
        raise ValueError("%s: seq_len %d does not divide the %d features of its input rows"
                         % (where, seq_len, features))
    else:
        state["features"] = features // seq_len
    state["tokens"] = (state["tokens"] or 1) * seq_len


def _features(state, wanted, where, name):
    if state["features"] is None:  # the first layer that says: the input width follows
        state["features"] = wanted
        state["width"] = wanted * state["split"]
    elif state["features"] != wanted:
        raise ValueError("%s: %s %d, but the rows it gets have %d features"
                         % (where, name, wanted, state["features"]))


def _tokens(state, wanted, where, name):
    if state["tokens"] is None:  # no Tokens before: the input rows come in sequences
        state["tokens"] = state["rows"] = wanted
    elif state["tokens"] != wanted:
        raise ValueError("%s: %s %d, but the layers before it make sequences of %d tokens"
                         % (where, name, wanted, state["tokens"]))
