"""The causal models the stream tests run (float: tests/device/test_stream.py; int8:
tests/host/test_reference_int8_stream.py and tests/device/test_qstream.py), and their int8
form as the device quantizes them (tinyattn_host.quantize)."""

import numpy as np

from tinyattn_host import quantize as hq
from tinyattn_host.reference.sequential import int8_layers
import int8_board_files as boardfiles
from checks import f32
from tinyattn_host.digits import init_params

S, F, E = 6, 3, 8
POOLED = [["Tokens", S], ["Dense", F, E, True], ["PositionalEmbedding", S, E],
          ["TransformerEncoderLayer", E, 2, 12, 0.0, "relu", False, 1e-5, S, True],
          ["TransformerEncoderLayer", E, 2, 12, 0.0, "gelu", True, 1e-5, S, True],
          ["GlobalAvgPool", S], ["Dense", E, 4, True]]
"""Two causal encoder layers (post-norm ReLU, pre-norm GELU), pooled: its first S tokens."""
T, W = 10, 4
"""The sliding case: T tokens through a window of W."""
PER_TOKEN = [["Dense", F, E, True], ["PositionalEmbedding", T, E],
             ["TransformerEncoderLayer", E, 2, 12, 0.0, "relu", False, 1e-5, T, True],
             ["Dense", E, 4, True]]
"""One causal encoder layer, an output per token."""


def noisy(params, rng):
    return {k: f32(v + 0.2 * rng.standard_normal(v.shape)) for k, v in params.items()}


def window_config(n):
    """PER_TOKEN over n tokens: its positional table and encoder of length n."""
    config = [list(spec) for spec in PER_TOKEN]
    config[1][1] = config[2][8] = n
    return config


def int8_model(config, seed, calib_rows, rng):
    """(specs, arrays, int8 layer dicts, float params) of `config` with noisy seeded weights,
    quantized as the device does on calib_rows random rows."""
    params = noisy(init_params(config, seed), rng)
    width = F * S if config[0][0] == "Tokens" else F
    specs, arrays = hq.quantize(config, params, f32(rng.standard_normal((calib_rows, width))))
    return specs, arrays, int8_layers(specs, arrays), params


def frames(specs, n, rng):
    """(float32 (n, F), their int8 at the model's input scale): n frames kept off rounding
    ties, so that a board's float32 quantizes them as the host does."""
    scale = hq.in_scale(specs)
    x = f32(boardfiles.robust_input(rng.standard_normal((n, F)), scale))
    return x, hq.quantize_tensor(x, scale).astype(np.int64)
