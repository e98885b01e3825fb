"""PyTorch state_dicts (built with NumPy in PyTorch's names and shapes) to model files and
back: bit for bit, every name where PyTorch puts it, and clear errors."""

import json

import numpy as np
import pytest

from torch_layout import description, model_state, tinyattn_params
from tinyattn_host import modelfile
from tinyattn_host.__main__ import main
from tinyattn_host.interop.statedict import (
    StateDictError, export_npz, export_state_dict, import_npz, import_state_dict)

RNG = np.random.default_rng(1515)
SHAPE = dict(S=8, F_in=8, E=16, F=32, classes=10, layers=2)
LAYERS = description(H=2, **SHAPE)


def test_import_puts_every_array_where_pytorch_has_it():
    state = model_state(rng=RNG, **SHAPE)
    config, params = import_state_dict(state, LAYERS)
    assert config == [e["layer"] for e in LAYERS]
    want = tinyattn_params(state, SHAPE["layers"])
    assert sorted(params) == sorted(want)
    for name, value in params.items():
        assert value.dtype == np.float32 and np.array_equal(value, want[name]), name


@pytest.mark.parametrize("activation, norm_first", [("relu", False), ("gelu", True)])
def test_import_then_export_is_bit_for_bit(tmp_path, activation, norm_first):
    state = model_state(rng=RNG, **SHAPE)
    layers = description(H=4, activation=activation, norm_first=norm_first, **SHAPE)
    np.savez(tmp_path / "in.npz", **state)
    import_npz(tmp_path / "in.npz", layers, tmp_path / "m.bin")
    kind, meta, arrays = modelfile.read_model(tmp_path / "m.bin")
    assert kind == "sequential" and meta["torch"] == layers
    assert meta["config"][3] == ["TransformerEncoderLayer", 16, 4, 32, 0.0, activation,
                                 norm_first, 1e-5, 8, False]
    export_npz(tmp_path / "m.bin", tmp_path / "out.npz")
    with np.load(tmp_path / "out.npz") as out:
        assert sorted(out.files) == sorted(state)
        for key, value in state.items():
            assert out[key].dtype == np.float32 and out[key].shape == value.shape, key
            assert out[key].tobytes() == value.tobytes(), key


def test_multihead_attention_and_layernorm_alone():
    E = 8
    state = {"attn.in_proj_weight": RNG.standard_normal((3 * E, E)),
             "attn.in_proj_bias": RNG.standard_normal(3 * E),
             "attn.out_proj.weight": RNG.standard_normal((E, E)),
             "attn.out_proj.bias": RNG.standard_normal(E),
             "ln.weight": RNG.standard_normal(E), "ln.bias": RNG.standard_normal(E)}
    state = {k: v.astype(np.float32) for k, v in state.items()}
    layers = [{"prefix": "attn", "layer": ["SelfAttention", E, 2, 4, True]},
              {"prefix": "ln", "layer": ["LayerNorm", E, 1e-5]}]
    _, params = import_state_dict(state, layers)
    assert np.array_equal(params["0.Wk"], state["attn.in_proj_weight"][E:2 * E])
    assert np.array_equal(params["0.bv"], state["attn.in_proj_bias"][2 * E:])
    assert np.array_equal(params["1.gamma"], state["ln.weight"])
    back = export_state_dict([e["layer"] for e in layers], params, layers)
    assert all(back[k].tobytes() == v.tobytes() for k, v in state.items())


def test_a_float64_state_dict_becomes_float32():
    state = {"fc.weight": RNG.standard_normal((3, 4)), "fc.bias": RNG.standard_normal(3)}
    _, params = import_state_dict(state, [{"prefix": "fc", "layer": ["Dense", 4, 3, True]}])
    assert params["0.W"].dtype == np.float32
    assert np.array_equal(params["0.W"], state["fc.weight"].astype(np.float32))


def broken(change):
    state = model_state(rng=np.random.default_rng(1), **SHAPE)
    change(state)
    return state


@pytest.mark.parametrize("state, layers, words", [
    (broken(lambda s: s.pop("encoder.layers.1.norm2.bias")), LAYERS,
     ["no 'encoder.layers.1.norm2.bias'", "layer 4", "TransformerEncoderLayer"]),
    (broken(lambda s: s.update({"encoder.norm.weight": np.ones(16, np.float32)})), LAYERS,
     ["keys no layer", "encoder.norm.weight"]),
    (broken(lambda s: s.update({"embed.weight": np.ones((16, 9), np.float32)})), LAYERS,
     ["embed.weight", "(16, 9)", "(16, 8)"]),
    (broken(lambda s: s.update({"encoder.layers.0.self_attn.in_proj_weight":
                                np.ones((16, 16), np.float32)})), LAYERS,
     ["in_proj_weight", "(16, 16)", "(48, 16)"]),
    (broken(lambda s: None), [{"layer": ["Dense", 8, 16, True]}], ["needs a \"prefix\""]),
    (broken(lambda s: None), {"embed": "Dense"}, ["list of"]),
    (broken(lambda s: None), [{"prefix": "x", "layer": ["Conv2d", 3]}], ["unknown layer kind", "Conv2d"]),
    (broken(lambda s: None), [{"prefix": "pos", "layer": ["PositionalEmbedding", 8, 16],
                               "shape": [8, 8, 2]}], ["pos", "(8, 8, 2)", "(8, 16)"]),
])
def test_a_state_dict_that_does_not_fit_gets_a_clear_error(state, layers, words):
    with pytest.raises(StateDictError) as err:
        import_state_dict(state, layers)
    for word in words:
        assert word in str(err.value)


def test_export_needs_the_models_layers(tmp_path):
    config, params = import_state_dict(model_state(rng=RNG, **SHAPE), LAYERS)
    with pytest.raises(StateDictError, match="not the model's"):
        export_state_dict(config[:-1], params, LAYERS)
    modelfile.write_model(tmp_path / "device.bin", "sequential", {"config": config}, params)
    with pytest.raises(StateDictError, match="--layers layers.json"):
        export_npz(tmp_path / "device.bin", tmp_path / "out.npz")
    state = export_npz(tmp_path / "device.bin", tmp_path / "out.npz", LAYERS)
    assert state["pos"].shape == (1, 8, 16)


def test_commands(tmp_path, capsys):
    state = model_state(rng=RNG, **SHAPE)
    np.savez(tmp_path / "in.npz", **state)
    (tmp_path / "layers.json").write_text(json.dumps(LAYERS))
    assert main(["import-torch", str(tmp_path / "in.npz"), str(tmp_path / "layers.json"),
                 "-o", str(tmp_path / "m.bin")]) == 0
    assert "7 layers (Tokens, Dense, PositionalEmbedding" in capsys.readouterr().out
    assert main(["export-torch", str(tmp_path / "m.bin"), "-o", str(tmp_path / "out.npz"),
                 "--layers", str(tmp_path / "layers.json")]) == 0
    assert "%d arrays" % len(state) in capsys.readouterr().out
    with np.load(tmp_path / "out.npz") as out:
        assert all(out[k].tobytes() == v.tobytes() for k, v in state.items())
    state.pop("head.bias")
    np.savez(tmp_path / "bad.npz", **state)
    assert main(["import-torch", str(tmp_path / "bad.npz"), str(tmp_path / "layers.json"),
                 "-o", str(tmp_path / "bad.bin")]) == 1
    assert "no 'head.bias'" in capsys.readouterr().err
    assert not (tmp_path / "bad.bin").exists()
