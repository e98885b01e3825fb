"""device/tinyattn/nn/spec.py, the declarations of the layer kinds: the layers build the
parameters they state (tests/board/case_params.py), a bad config entry gets an error naming
it, and the host's loaded copy is the same table (tests/device/test_kinds.py: every kind)."""

from board_cases import board_test
from tinyattn_host.device_modules import device_module

SPECS = [
    ["Dense", 4, 3], ["Dense", 5, 2, False], ["Activation", "gelu_tanh"], ["Tokens", 4],
    ["SelfAttention", 8, 2, 4], ["SelfAttention", 8, 4, 2, False, 0.1, True],
    ["GlobalAvgPool", 3], ["LayerNorm", 6], ["LayerNorm", 6, 1e-6],
    ["PositionalEmbedding", 5, 8], ["Gelu"],
    ["TransformerEncoderLayer", 8, 2, 16], ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu",
                                           True, 1e-5, 4, True],
    ["TransformerEncoderLayer", 8, 2, 16, 0.1],
]
BAD = [
    [["Dense", 4], ["must be ['Dense', in_features, out_features, use_bias]"]],
    [["Dense", 4, 0], ["out_features must be an int >= 1", "0"]],
    [["SelfAttention", 6, 4, 2], ["not divisible"]],
    [["SelfAttention", 8, 2, 2, True, 1.5], ["dropout must be in [0, 1)"]],
    [["Activation", "swish"], ["kind must be one of", "swish"]],
    [["LayerNorm", 4, 0.0], ["eps must be a finite number > 0"]],
    [["Conv2d", 3], ["unknown layer kind", "Conv2d"]],
    [["TransformerEncoderLayer", 8, 2, 16, 1.0], ["dropout must be in [0, 1)"]],
    [["TransformerEncoderLayer", 8, 2, 16, 0.1, "swish"], ["activation must be one of", "swish"]],
]


def test_the_host_loads_the_same_table():
    params = device_module("nn/spec")
    assert params.layer_shapes(["SelfAttention", 8, 2, 4, False]) == [
        ("Wq", (8, 8)), ("Wk", (8, 8)), ("Wv", (8, 8)), ("Wo", (8, 8))]


test_params_on_board = board_test("case_params", lambda: {"specs": {"specs": SPECS, "bad": BAD}})
