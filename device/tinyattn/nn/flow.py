"""A model config's shapes followed through every layer: what each layer takes and gives.

Plain Python (no ulab, no micropython), shared with the host (tinyattn_host.interop.statedict checks a
PyTorch description with it before it writes anything). A sample is `tokens` rows of
`features` each: Tokens(S) splits each row into S, GlobalAvgPool(S) joins S rows into one.
The input is one row a sample, unless a layer that works on sequences (attention, positional,
pooling) comes before any Tokens: then the input rows are those sequences' tokens. The first
error is a ValueError naming the layer and both numbers; an entry whose own arguments are not
valid is one naming the argument (spec.arguments).
"""

from .spec import ARGS, FLOW, arguments, kind_of


def follow(config):
    """(input width, input rows a sample, (tokens, features) of the output) of a model
    config; input width None when no layer fixes it. ValueError at the first layer whose
    sizes disagree with what the layers before it give. Each kind's FLOW declaration (spec.py)
    says what it does to the shapes."""
    state = {"tokens": None, "features": None, "split": 1, "width": None, "rows": 1}
    for i, spec in enumerate(config):
        kind = kind_of(spec[0])
        values = arguments(kind, spec[1:])
        where = "layer %d (%s)" % (i, spec[0])
        for step, index in kind[FLOW]:
            value, name = values[index], kind[ARGS][3 * index]
            if step == "features":
                _features(state, value, where, name)
            elif step == "out":
                state["features"] = value
            elif step == "tokens":
                if value is not None:
                    _tokens(state, value, where, name)
            elif step == "split":
                _split(state, value, where)
            else:  # "pool"
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
