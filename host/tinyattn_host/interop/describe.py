"""A draft layers.json from a state_dict's keys and shapes (`import-torch --describe`).

What the shapes say: nn.Linear (`<p>.weight` (out, in), `<p>.bias`) is Dense, nn.LayerNorm
(`<p>.weight` (E,), `<p>.bias`) is LayerNorm, `<p>.self_attn.in_proj_weight` and its siblings
an nn.TransformerEncoderLayer (d_model, dim_feedforward from linear1), `<p>.in_proj_weight` an
nn.MultiheadAttention (SelfAttention), a parameter (S, E) or (1, S, E) a positional one (S
tokens). What they cannot say is a guess with a "comment" on the entry, and a note: the number
of heads (d_model // 8: 8 features a head, a divisor of d_model), dropout, activation,
norm_first and eps (PyTorch's constructor defaults), the order of the forward (the state_dict's
order, the positional parameter after the Linear that makes its width), that the input rows
are split into S tokens (Tokens first) and the mean over the tokens before the head
(GlobalAvgPool).
"""

import json

from .named_layers import named

HEAD_FEATURES = 8
"""Features a head in the draft's guess of the number of heads (PyTorch has no default)."""

TORCH_DEFAULTS = {"dropout": 0.1, "activation": "relu", "norm_first": False,
                  "layer_norm_eps": 1e-05}
"""nn.TransformerEncoderLayer's constructor defaults, which the shapes do not show."""


def guess_heads(E):
    """A number of heads that divides E: E // 8 when 8 divides E, else the largest divisor
    of E that leaves at least 8 features a head (1 at worst)."""
    if E % HEAD_FEATURES == 0:
        return E // HEAD_FEATURES
    return max(h for h in range(1, E + 1) if E % h == 0 and E // h >= min(E, HEAD_FEATURES))


def _join(prefix, name):
    return prefix + "." + name if prefix else name


def _modules(shapes):
    """[(prefix, config, comment, torch shape or None)] in the state_dict's order; the keys
    no module takes."""
    taken, modules, unknown = set(), [], []
    for key, shape in shapes.items():
        if key in taken:
            continue
        prefix, _, name = key.rpartition(".")
        if name == "in_proj_weight" and prefix.endswith("self_attn"):
            layer = prefix[:-len("self_attn")].rstrip(".")
            parts = [_join(layer, "self_attn.in_proj_" + n) for n in ("weight", "bias")] + \
                [_join(layer, p + "." + n) for p in ("self_attn.out_proj", "linear1", "linear2",
                                                     "norm1", "norm2") for n in ("weight", "bias")]
            found = [p for p in parts if p in shapes]
            taken.update(found)
            E, F = shape[1], shapes.get(_join(layer, "linear1.weight"), (None,))[0]
            modules.append((layer, ["TransformerEncoderLayer", E, guess_heads(E), F,
                                    TORCH_DEFAULTS["dropout"], TORCH_DEFAULTS["activation"],
                                    TORCH_DEFAULTS["norm_first"], TORCH_DEFAULTS["layer_norm_eps"],
                                    None, False],
                            "nhead %d is a guess (8 features a head; the shapes do not say "
                            "it): set your model's; dropout, activation, norm_first, "
                            "layer_norm_eps are PyTorch's defaults: set yours" % guess_heads(E),
                            None))
            if len(found) < len(parts):
                unknown.extend("%s missing (an encoder layer without bias? tinyattn's has "
                               "biases)" % p for p in parts if p not in shapes)
        elif name == "in_proj_weight":
            parts = [_join(prefix, n) for n in ("in_proj_weight", "in_proj_bias",
                                                "out_proj.weight", "out_proj.bias")]
            taken.update(p for p in parts if p in shapes)
            E = shape[1]
            modules.append((prefix, ["SelfAttention", E, guess_heads(E), None,
                                     _join(prefix, "in_proj_bias") in shapes],
                            "num_heads %d is a guess (8 features a head; the shapes do not "
                            "say it): set your model's" % guess_heads(E), None))
        elif name == "weight" and len(shape) == 2:
            bias = _join(prefix, "bias")
            taken.update((key, bias))
            modules.append((prefix, ["Dense", shape[1], shape[0], bias in shapes], None, None))
        elif name == "weight" and len(shape) == 1 and _join(prefix, "bias") in shapes:
            taken.update((key, _join(prefix, "bias")))
            modules.append((prefix, ["LayerNorm", shape[0], 1e-05],
                            "eps 1e-05 is PyTorch's default: set yours", None))
        elif len(shape) in (2, 3) and (len(shape) == 2 or shape[0] == 1) and \
                name not in ("weight", "bias"):
            taken.add(key)
            modules.append((key, ["PositionalEmbedding", shape[-2], shape[-1]], None,
                            list(shape) if len(shape) == 3 else None))
        else:
            unknown.append("%s %s" % (key, tuple(shape)))
    return modules, unknown


def _in_forward_order(modules):
    """The positional parameter moved after the first Dense whose output is its width."""
    for i, module in enumerate(modules):
        if module[1][0] != "PositionalEmbedding":
            continue
        E = module[1][2]
        makes = [j for j, m in enumerate(modules) if m[1][0] == "Dense" and m[1][2] == E]
        if makes and makes[0] > i:
            modules = modules[:i] + modules[i + 1:]
            modules.insert(makes[0], module)
        break
    return modules


def describe(shapes):
    """(draft description, notes): shapes is {PyTorch name: shape} in the state_dict's order;
    the draft is a list of entries, each "layer" in the named form."""
    modules, unknown = _modules(shapes)
    modules = _in_forward_order(modules)
    notes = []
    positional = [m for m in modules if m[1][0] == "PositionalEmbedding"]
    attends = [i for i, m in enumerate(modules)
               if m[1][0] in ("TransformerEncoderLayer", "SelfAttention")]
    S = positional[0][1][1] if positional else None
    if attends and S is None:
        S = 1
        notes.append("no positional parameter: the sequence length is not in the shapes; the "
                     "draft says 1: set seq_len (Tokens, GlobalAvgPool, the attention) to yours")
    entries = []
    if attends:
        width = next((m[1][1] for m in modules if m[1][0] == "Dense"), None)
        entries.append(({"kind": "Tokens", "seq_len": S}, None, None,
                        "each input row is %d token(s) of %s features, one after the other "
                        "(PyTorch's (B, S, F) input reshaped to (B, S*F))"
                        % (S, width or "the model's")))
    last = attends[-1] if attends else None
    for i, (prefix, config, comment, shape) in enumerate(modules):
        if config[0] == "TransformerEncoderLayer":
            config[8] = S
        elif config[0] == "SelfAttention":
            config[3] = S
        if last is not None and i > last and config[0] == "Dense" and \
                not any(e[0]["kind"] == "GlobalAvgPool" for e in entries):
            entries.append(({"kind": "GlobalAvgPool", "seq_len": S}, None, None,
                            "a guess: the mean over the tokens before %s (x.mean(dim=1)); a "
                            "model that takes one token instead is not this" % prefix))
        entries.append((named(config), prefix, shape, comment))
    draft = []
    for layer, prefix, shape, comment in entries:
        entry = {} if prefix is None else {"prefix": prefix}
        entry["layer"] = layer
        if shape is not None:
            entry["shape"] = shape
        if comment:
            entry["comment"] = comment
        draft.append(entry)
    dense = [i for i, m in enumerate(modules) if m[1][0] == "Dense"]
    if any(b == a + 1 for a, b in zip(dense, dense[1:])):
        notes.append("two Linear layers in a row: an activation between them (if any) is not "
                     "in the state_dict: add {\"layer\": {\"kind\": \"Activation\", "
                     "\"activation\": \"relu\"}} where your forward has one")
    if unknown:
        notes.append("keys no tinyattn layer takes, or missing: %s" % ", ".join(unknown))
    notes.append("not in the shapes, so guessed (each entry's \"comment\" says which): the "
                 "number of heads, dropout, activation, norm_first, eps, the order of the "
                 "forward, the pooling; check them against your model's code")
    return draft, notes


def draft_text(draft):
    """The draft as layers.json text, one entry a line (import-torch reads it as it is)."""
    return "[\n" + ",\n".join(json.dumps(entry) for entry in draft) + "\n]\n"
