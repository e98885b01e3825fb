"""One declaration per layer kind on the host (reference/kinds.py): every kind the device
knows is known to each host consumer (the float reference forward and backward, the PyTorch
names, the int8 reference); and a new kind needs one declaration here, its parameters coming
from the device's table."""

import numpy as np
import pytest

from tinyattn_host.interop.statedict import export_state_dict, import_state_dict
from tinyattn_host.reference import int8, kinds
from tinyattn_host.reference.kinds import KINDS, declare, device_kinds, param_shapes
from tinyattn_host.reference.sequential import (int8_forward, int8_layers, sequential_backward,
                                                sequential_forward)
from checks import assert_grads_close, numeric_grad

RNG = np.random.default_rng(19)

# a config entry of every kind the device knows, and the rows of its input
EXAMPLES = {
    "Dense": (["Dense", 4, 3, True], (2, 4)),
    "Activation": (["Activation", "tanh"], (2, 4)),
    "Tokens": (["Tokens", 2], (2, 4)),
    "SelfAttention": (["SelfAttention", 4, 2, 2, True, 0.0, False], (4, 4)),
    "GlobalAvgPool": (["GlobalAvgPool", 2], (4, 3)),
    "LayerNorm": (["LayerNorm", 4, 1e-5], (3, 4)),
    "PositionalEmbedding": (["PositionalEmbedding", 2, 4], (4, 4)),
    "Gelu": (["Gelu"], (2, 3)),
    "TransformerEncoderLayer": (["TransformerEncoderLayer", 4, 2, 6, 0.0, "relu", False, 1e-5,
                                 2, False], (4, 4)),
    "Embedding": (["Embedding", 5, 3], [0, 3, 3, 1]),  # token ids in: no input gradient
    "RMSNorm": (["RMSNorm", 4, 1e-5], (3, 4)),
    "SwiGLU": (["SwiGLU", 4, 6], (3, 4)),
    "DecoderBlock": (["DecoderBlock", 4, 2, 1, 6, 8, 1e-5, "half", 100.0], (3, 4)),
    "Classifier": (["Classifier", 4, 5, False], (3, 4)),
}
LANGUAGE_MODEL = {"Embedding", "RMSNorm", "DecoderBlock", "Classifier"}
"""The decoder's kinds: their int8 forms run a position at a time (int8_lm.Int8LM, each by
its int8_step), not in an int8 Sequential."""
PART_ONLY = {"SwiGLU"}  # a block's feed-forward: no int8 form of its own


def random_params(config):
    return {"%d.%s" % (i, name): RNG.standard_normal(shape)
            for i, spec in enumerate(config) for name, shape in param_shapes(spec).items()}


def test_the_examples_are_every_kind_the_device_knows():
    assert sorted(EXAMPLES) == device_kinds()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_float_reference_knows_the_kind(name):
    spec, rows = EXAMPLES[name]
    params = random_params([spec])
    ids = isinstance(rows, list)
    x = np.array(rows) if ids else RNG.standard_normal(rows)
    y, caches = sequential_forward([spec], params, x)
    G = RNG.standard_normal(y.shape)
    dx, grads = sequential_backward([spec], params, caches, G)
    assert sorted(grads) == sorted(params)
    assert dx is None if ids else dx.shape == x.shape

    def loss():
        return np.sum(sequential_forward([spec], params, x)[0] * G)

    numeric = {k: numeric_grad(loss, v) for k, v in params.items()}
    if not ids:
        grads, numeric = {"x": dx, **grads}, {"x": numeric_grad(loss, x), **numeric}
    assert_grads_close(grads, numeric, 1e-6)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_parameter_has_a_pytorch_name(name):
    spec, _ = EXAMPLES[name]
    named = {n for names in KINDS[name].torch.values() for n in names}
    assert named == set(param_shapes(spec))
    layers = [{"prefix": "layer", "layer": spec}] if named else [{"layer": spec}]
    params = {k: v.astype(np.float32) for k, v in random_params([spec]).items()}
    state = export_state_dict([spec], params, layers)
    assert all(key == "layer" or key.startswith("layer.") for key in state)
    config, back = import_state_dict(state, layers)
    assert config == [spec] and sorted(back) == sorted(params)
    assert all(back[k].tobytes() == params[k].tobytes() for k in params)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_int8_reference_knows_what_the_device_quantizes_the_kind_into(name):
    k = KINDS[name]
    if name in PART_ONLY:
        assert (k.int8_as, k.int8_step, k.quantize, k.calibrate) == (None,) * 4
        return
    if name in LANGUAGE_MODEL:
        assert k.int8_as is None and callable(k.int8_step)
    else:
        assert k.int8_as in KINDS and KINDS[k.int8_as].int8 is not None and k.int8_step is None
    assert callable(kinds.quantizer(k.quantize)), "the host cannot quantize a %s" % name
    assert k.calibrate is None or callable(kinds.quantizer(k.calibrate))


def test_a_new_kind_is_one_declaration_on_each_side(monkeypatch):
    """Scale: y = x * s per column. The device side's one declaration is its `declare` in
    nn/spec.py (docs/layer-kinds.md); the host side's is the `declare` below; then the float reference, the
    PyTorch names and the int8 reference all run it."""
    spec = kinds.device_spec()
    monkeypatch.setattr(spec, "KINDS", dict(spec.KINDS))
    spec.declare("Scale", "case_kinds", ("features", spec.dim, spec.REQUIRED),
                 lambda E: [("s", (E,))])
    monkeypatch.setattr(kinds, "KINDS", dict(KINDS))
    declare("Scale", forward=lambda spec, p, x: (x * p["s"], x),
            backward=lambda spec, p, x, g: (g * p["s"], {"s": (g * x).sum(axis=0)}),
            torch={"weight": ["s"]},
            int8=(lambda spec, arrays, prefix: {"kind": "Scale", "shift": spec["shift"]},
                  lambda x, layer: x >> layer["shift"]))
    config = [["Dense", 3, 4, True], ["Scale", 4]]
    params = random_params(config)
    x = RNG.standard_normal((2, 3))
    y, caches = sequential_forward(config, params, x)
    assert np.allclose(y, (x @ params["0.W"].T + params["0.b"]) * params["1.s"])
    G = RNG.standard_normal(y.shape)
    _, grads = sequential_backward(config, params, caches, G)

    def loss():
        return np.sum(sequential_forward(config, params, x)[0] * G)

    assert_grads_close(grads, {k: numeric_grad(loss, v) for k, v in params.items()}, 1e-6)
    layers = [{"prefix": "fc", "layer": config[0]}, {"prefix": "scale", "layer": config[1]}]
    state = export_state_dict(config, {k: v.astype(np.float32) for k, v in params.items()}, layers)
    assert sorted(state) == ["fc.bias", "fc.weight", "scale.weight"]
    assert import_state_dict(state, layers)[0] == config
    xq = np.array([[-128, -3, 0, 127]])
    dense = {"kind": "Dense", "in": 4, "out": 4, "mult": None}
    model = int8_layers([dense, {"kind": "Scale", "shift": 1}], {"0.W": np.eye(4, dtype=np.int8)})
    assert int8_forward(xq, model)[-1].tolist() == [[-64, -2, 0, 63]]
    assert int8.dense_run(xq, model[0]).tolist() == xq.tolist()
