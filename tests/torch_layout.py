"""State dicts in PyTorch's names and shapes, made with NumPy (no torch): a digits-like model
nn.Linear -> a (1, S, E) positional parameter -> nn.TransformerEncoder -> nn.Linear."""

import numpy as np


def encoder_layer_state(prefix, E, F, rng):
    """nn.TransformerEncoderLayer(E, H, F).state_dict() layout, under `prefix.`."""
    shapes = {"self_attn.in_proj_weight": (3 * E, E), "self_attn.in_proj_bias": (3 * E,),
              "self_attn.out_proj.weight": (E, E), "self_attn.out_proj.bias": (E,),
              "linear1.weight": (F, E), "linear1.bias": (F,), "linear2.weight": (E, F),
              "linear2.bias": (E,), "norm1.weight": (E,), "norm1.bias": (E,),
              "norm2.weight": (E,), "norm2.bias": (E,)}
    state = {}
    for name, shape in shapes.items():
        value = rng.standard_normal(shape) * 0.3
        if name.startswith("norm") and name.endswith("weight"):
            value += 1.0
        state[prefix + "." + name] = value.astype(np.float32)
    return state


def model_state(S, F_in, E, F, classes, layers, rng):
    """The state_dict of the digits-like model, float32."""
    state = {"embed.weight": rng.standard_normal((E, F_in)), "embed.bias": rng.standard_normal(E),
             "pos": rng.standard_normal((1, S, E)) * 0.1,
             "head.weight": rng.standard_normal((classes, E)) * 0.3,
             "head.bias": rng.standard_normal(classes) * 0.1}
    state = {k: v.astype(np.float32) for k, v in state.items()}
    for i in range(layers):
        state.update(encoder_layer_state("encoder.layers.%d" % i, E, F, rng))
    return state


def description(S, F_in, E, H, F, classes, layers, activation="relu", norm_first=False):
    """The import description of that model, as README shows it."""
    entries = [{"layer": ["Tokens", S]},
               {"prefix": "embed", "layer": ["Dense", F_in, E, True]},
               {"prefix": "pos", "layer": ["PositionalEmbedding", S, E], "shape": [1, S, E]}]
    for i in range(layers):
        entries.append({"prefix": "encoder.layers.%d" % i,
                        "layer": ["TransformerEncoderLayer", E, H, F, 0.0, activation,
                                  norm_first, 1e-5, S, False]})
    entries += [{"layer": ["GlobalAvgPool", S]},
                {"prefix": "head", "layer": ["Dense", E, classes, True]}]
    return entries


def tinyattn_params(state, layers):
    """The same parameters under tinyattn's names, written out by hand for each key (an
    independent check of statedict.py's mapping); layer indexes as in description()."""
    E = state["embed.weight"].shape[0]
    p = {"1.W": state["embed.weight"], "1.b": state["embed.bias"], "2.P": state["pos"][0]}
    for i in range(layers):
        t, n = "encoder.layers.%d." % i, "%d." % (3 + i)
        W, b = state[t + "self_attn.in_proj_weight"], state[t + "self_attn.in_proj_bias"]
        p[n + "self_attn.Wq"], p[n + "self_attn.Wk"], p[n + "self_attn.Wv"] = W[:E], W[E:2 * E], W[2 * E:]
        p[n + "self_attn.bq"], p[n + "self_attn.bk"], p[n + "self_attn.bv"] = b[:E], b[E:2 * E], b[2 * E:]
        p[n + "self_attn.Wo"] = state[t + "self_attn.out_proj.weight"]
        p[n + "self_attn.bo"] = state[t + "self_attn.out_proj.bias"]
        for part in ("linear1", "linear2"):
            p[n + part + ".W"], p[n + part + ".b"] = state[t + part + ".weight"], state[t + part + ".bias"]
        for part in ("norm1", "norm2"):
            p[n + part + ".gamma"], p[n + part + ".beta"] = state[t + part + ".weight"], state[t + part + ".bias"]
    last = 3 + layers + 1
    p["%d.W" % last], p["%d.b" % last] = state["head.weight"], state["head.bias"]
    return {k: v.astype(np.float64) for k, v in p.items()}


def multihead_attention(query, key, value, in_proj_weight, in_proj_bias, out_proj_weight,
                        out_proj_bias, num_heads, key_padding_mask=None):
    """nn.MultiheadAttention(E, H, batch_first=True)(query, key, value, key_padding_mask)[0]
    written out as F.multi_head_attention_forward computes it, in PyTorch's layout: query
    (B, L, E), key and value (B, S, E), in_proj_weight (3E, E) = [Wq; Wk; Wv],
    key_padding_mask (B, S) True where a key is ignored."""
    B, L, E = query.shape
    S, D = key.shape[1], E // num_heads
    w_q, w_k, w_v = np.split(in_proj_weight, 3)
    b_q, b_k, b_v = np.split(in_proj_bias, 3)
    q = (query @ w_q.T + b_q).reshape(B, L, num_heads, D).transpose(0, 2, 1, 3)
    k = (key @ w_k.T + b_k).reshape(B, S, num_heads, D).transpose(0, 2, 1, 3)
    v = (value @ w_v.T + b_v).reshape(B, S, num_heads, D).transpose(0, 2, 1, 3)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(D)
    if key_padding_mask is not None:
        scores = np.where(key_padding_mask[:, None, None, :], -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(B, L, E)
    return out @ out_proj_weight.T + out_proj_bias
