"""The masked model the sequence tests share (reference on the host, device cases): every
layer kind a variable-length model uses, lengths down to 1, and its padded inputs."""

import numpy as np

from tinyattn_host.digits import init_params
from tinyattn_host.sequences import padding_mask

S, F, E = 5, 3, 8
MODEL = [["Tokens", S], ["Dense", F, E, True], ["PositionalEmbedding", S, E],
         ["LayerNorm", E, 1e-5],
         ["TransformerEncoderLayer", E, 2, 12, 0.0, "gelu", False, 1e-5, S, False],
         ["SelfAttention", E, 2, S, True, 0.0, False],
         ["TransformerEncoderLayer", E, 2, 12, 0.0, "relu", True, 1e-5, S, True],
         ["GlobalAvgPool", S], ["Dense", E, 4, True]]
LENGTHS = [5, 2, 1, 3]
LABELS = [0, 3, 1, 2]


def model_params(seed=4):
    """Float32-exact parameters; biases, beta and P off zero, so that padded rows are not 0."""
    params = init_params(MODEL, seed)
    rng = np.random.default_rng(seed)
    for name in params:
        if params[name].ndim == 1 or name.endswith(".P"):
            noise = 0.2 * rng.standard_normal(params[name].shape)
            params[name] = (params[name] + noise).astype(np.float32).astype(np.float64)
    return params


def padded_inputs(rng, lengths=LENGTHS):
    """(len(lengths), S*F) float32-exact frames, zeros after each length."""
    x = rng.standard_normal((len(lengths), S * F)).astype(np.float32).astype(np.float64)
    return x * np.repeat(padding_mask(lengths, S), F, axis=1)
