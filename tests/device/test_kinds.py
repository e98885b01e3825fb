"""Every layer kind, from its one declaration (device/tinyattn/nn/spec.py), which the host loads
too: every consumer knows every kind (here the host's: the PyTorch mapping and the reference;
the device's in tests/board/case_kinds.py), every argument a constructor accepts survives
save -> load, and a kind declared in a test is known everywhere with that one declaration."""

import numpy as np
import pytest

from board_cases import board_test
from tinyattn_host.interop import statedict
from tinyattn_host.reference.decoder import lm_backward, lm_forward
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.device_modules import device_module

SPEC = device_module("nn/spec")

# Every kind with each argument away from its default, and an input (rows, cols) it takes.
NON_DEFAULT = {
    "Dense": (["Dense", 5, 3, False], (2, 5)),
    "Activation": (["Activation", "sigmoid"], (2, 3)),
    "Tokens": (["Tokens", 3], (2, 6)),
    "SelfAttention": (["SelfAttention", 6, 3, 2, False, 0.25, True, 1], (4, 6)),
    "GlobalAvgPool": (["GlobalAvgPool", 2], (4, 3)),
    "LayerNorm": (["LayerNorm", 4, 1], (3, 4)),  # an int eps: issue 19's file that did not load
    "PositionalEmbedding": (["PositionalEmbedding", 3, 4], (6, 4)),
    "Gelu": (["Gelu"], (2, 3)),
    "TransformerEncoderLayer": (["TransformerEncoderLayer", 4, 2, 6, 0.1, "gelu", True, 0.001,
                                 3, True, 1], (6, 4)),
    "Embedding": (["Embedding", 7, 4], (5, 1)),  # token ids in
    "RMSNorm": (["RMSNorm", 4, 0.001], (3, 4)),
    "SwiGLU": (["SwiGLU", 4, 6], (3, 4)),
    "DecoderBlock": (["DecoderBlock", 4, 2, 1, 6, 8, 0.001, "half", 100.0], (3, 4)),
    "Classifier": (["Classifier", 4, 7, True], (3, 4)),  # tied: the Embedding's weights
}
NO_INT8_YET = ["SwiGLU"]  # int8 inside a DecoderBlock (int8/decoder.py), not on its own


def test_the_configs_cover_every_kind_and_every_argument():
    assert sorted(NON_DEFAULT) == sorted(SPEC.KINDS)
    for kind, (entry, _) in NON_DEFAULT.items():
        declared = SPEC.KINDS[kind]
        args = declared[SPEC.ARGS]
        assert entry[0] == kind and 3 * (len(entry) - 1) == len(args), entry
        for value, name, default in zip(entry[1:], args[::3], args[2::3]):
            assert value != default, (kind, name)
        assert SPEC.arguments(declared, entry[1:]) == entry[1:]


@pytest.mark.parametrize("kind", sorted(NON_DEFAULT))
def test_every_kind_is_known_to_the_host(kind):
    """Its parameters as the PyTorch mapping reads them, and the reference's forward and
    backward (every parameter gets its gradient)."""
    entry, (rows, cols) = NON_DEFAULT[kind]
    rng = np.random.default_rng(1)
    shapes = statedict.param_shapes(entry)
    assert list(shapes.items()) == [(n, tuple(s)) for n, s in SPEC.layer_shapes(entry)]
    params = {"0." + n: rng.standard_normal(s) for n, s in shapes.items()}
    if kind == "Classifier":  # tied: it runs after the Embedding whose weights it takes
        config, x = [["Embedding", 7, 4], entry], [1, 6, 6]
        params = {"0.W": rng.standard_normal((7, 4))}
        y, caches = lm_forward(config, params, x)
        assert sorted(lm_backward(config, params, caches, np.ones_like(y))) == ["0.W"]
        return
    ids = kind == "Embedding"
    x = rng.integers(0, entry[1], rows) if ids else rng.standard_normal((rows, cols))
    y, caches = sequential_forward([entry], params, x)
    dx, grads = sequential_backward([entry], params, caches, np.ones_like(y))
    assert dx is None if ids else dx.shape == x.shape
    assert sorted(grads) == sorted(params)


def test_a_kind_declared_here_is_known_to_the_host():
    SPEC.declare("Scale", "case_kinds", ("features", SPEC.dim, SPEC.REQUIRED),
                 lambda n: [("s", (n,))])
    try:
        assert statedict.param_shapes(["Scale", 3]) == {"s": (3,)}
        assert SPEC.model_shapes([["Dense", 4, 3], ["Scale", 3]])[-1] == ("1.s", (3,))
        with pytest.raises(statedict.StateDictError, match="features must be an int >= 1"):
            statedict.param_shapes(["Scale", 0])
    finally:
        del SPEC.KINDS["Scale"]


test_kinds_on_board = board_test(
    "case_kinds", lambda: {"kinds": {"entries": {k: e for k, (e, _) in NON_DEFAULT.items()},
                                     "no_int8": NO_INT8_YET}})
