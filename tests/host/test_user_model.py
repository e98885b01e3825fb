"""A user's own PyTorch model (issue 20), host side: import-torch of the fixtures made with real
PyTorch (tests/fixtures/make_torch_fixtures.py), the description's shapes checked before
anything is written, bare state dicts, and every bad file refused in one line."""

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host.__main__ import main
from tinyattn_host.checks.digits_check import TOLERANCE, relative_error
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.interop.arrayfiles import read_state_dict
from tinyattn_host.interop.statedict import import_npz, import_state_dict, read_description

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
VARIANTS = ("base", "norm_first", "gelu", "dropout")


def reference(config, params, x):
    y, _ = sequential_forward(config, {k: v.astype(np.float64) for k, v in params.items()},
                              np.asarray(x, np.float64))
    return y


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_reference_computes_what_torch_computed(variant):
    folder = FIXTURES / variant
    layers = read_description(folder / "layers.json")
    config, params = import_state_dict(read_state_dict(folder / "model.npz"), layers)
    want = np.load(folder / "out.npy")
    got = reference(config, params, np.load(FIXTURES / "inputs.npy"))
    assert relative_error(got, want) <= TOLERANCE
    assert np.abs(got - want).max() < 1e-6  # float32 torch against float64: ~1.3e-7 measured
    dropout = json.loads((FIXTURES / "manifest.json").read_text())["variants"][variant][
        "layer_args"].get("dropout", 0.1)
    assert [spec[4] for spec in config if spec[0] == "TransformerEncoderLayer"] == [dropout] * 2


@pytest.mark.parametrize("name, layer", [
    ("encoder_layer", ["TransformerEncoderLayer", 8, 2, 16, 0.1, "relu", False, 1e-5, 4, False]),
    ("mha", ["SelfAttention", 8, 2, 4, True]),
])
def test_a_bare_state_dict_imports_with_the_empty_prefix(name, layer):
    bare = FIXTURES / "bare"
    config, params = import_state_dict(read_state_dict(bare / (name + ".npz")),
                                       [{"prefix": "", "layer": layer}])
    got = reference(config, params, np.load(bare / "x.npy"))
    assert np.abs(got - np.load(bare / (name + "_out.npy"))).max() < 1e-6


def described(change):
    layers = read_description(FIXTURES / "base" / "layers.json")
    change(layers)
    return layers


def _set(index, position, value):
    return lambda layers: layers[index]["layer"].__setitem__(position, value)


@pytest.mark.parametrize("layers, words", [
    (described(_set(3, 8, 8)), ["layer 3 (TransformerEncoderLayer)", "seq_len 8",
                                "sequences of 16 tokens"]),
    (described(_set(0, 1, 8)), ["layer 2 (PositionalEmbedding)", "seq_len 16",
                                "sequences of 8 tokens"]),
    (described(_set(6, 1, 8)), ["layer 6 (GlobalAvgPool)", "seq_len 8", "of 16 tokens"]),
    (described(_set(5, 1, 16)), ["layer 5 (LayerNorm)", "normalized_shape 16", "have 32"]),
    (described(_set(1, 1, 16)), ["embed.weight has shape (32, 12)", "layer 1 (Dense) needs (32, 16)"]),
])
def test_a_description_whose_shapes_disagree_is_refused_before_writing(tmp_path, capsys,
                                                                        layers, words):
    (tmp_path / "layers.json").write_text(json.dumps(layers))
    code = main(["import-torch", str(FIXTURES / "base" / "model.npz"),
                 str(tmp_path / "layers.json"), "-o", str(tmp_path / "m.bin")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    for word in words:
        assert word in err, err
    assert not (tmp_path / "m.bin").exists()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_state_dict_with_nan_or_infinity_is_refused_naming_the_key(tmp_path, capsys, bad):
    state = read_state_dict(FIXTURES / "base" / "model.npz")
    state["encoder.layers.1.linear2.weight"][3, 5] = bad
    np.savez(tmp_path / "nan.npz", **state)
    code = main(["import-torch", str(tmp_path / "nan.npz"), str(FIXTURES / "base" / "layers.json"),
                 "-o", str(tmp_path / "m.bin")])
    err = capsys.readouterr().err
    assert code == 1 and "encoder.layers.1.linear2.weight holds NaN or infinity" in err
    assert not (tmp_path / "m.bin").exists()


def _bad_files(tmp):
    """(path, words of its one-line message) of every kind of file that is not a state_dict."""
    good = (FIXTURES / "base" / "model.npz").read_bytes()
    files = {"truncated.npz": good[:len(good) // 2], "empty.npz": b"",
             "text.npz": b"embed.weight 1 2 3\n", "short.npz": good[:40]}
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    np.save(tmp / "array.npy", np.zeros(3))
    (tmp / "pickle.npz").write_bytes(pickle.dumps({"embed.weight": [1.0]}))
    np.savez(tmp / "objects.npz", **{"embed.weight": np.array([{"a": 1}], dtype=object)})
    with zipfile.ZipFile(tmp / "plain.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    return [
        (tmp / "truncated.npz", ["truncated.npz", "cut short or damaged"]),
        (tmp / "short.npz", ["short.npz", "cut short or damaged"]),
        (tmp / "empty.npz", ["empty.npz is empty (0 bytes)"]),
        (tmp / "text.npz", ["text.npz is not a state_dict .npz", "text"]),
        (FIXTURES / "bare" / "mha.pt", ["mha.pt is a torch.save file", "np.savez"]),
        (tmp / "array.npy", ["array.npy is a single array (.npy)"]),
        (tmp / "pickle.npz", ["pickle.npz holds pickled Python objects"]),
        (tmp / "objects.npz", ["objects.npz", "'embed.weight'", "pickled Python objects"]),
        (tmp / "plain.zip", ["plain.zip is a zip file without .npy arrays"]),
        (tmp / "missing.npz", ["missing.npz", "No such file"]),
    ]


def test_every_bad_state_dict_file_is_one_line_and_exit_1(tmp_path, capsys):
    for path, words in _bad_files(tmp_path):
        code = main(["import-torch", str(path), str(FIXTURES / "base" / "layers.json"),
                     "-o", str(tmp_path / "m.bin")])
        err = capsys.readouterr().err
        assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, (path, err)
        for word in words:
            assert word in err, (path, err)
        assert not (tmp_path / "m.bin").exists()


def test_a_json_syntax_error_names_the_file_and_line(tmp_path, capsys):
    text = (FIXTURES / "base" / "layers.json").read_text().splitlines()
    text[3] = text[3].rstrip(",")  # a comma missing at the end of line 4
    (tmp_path / "layers.json").write_text("\n".join(text))
    code = main(["import-torch", str(FIXTURES / "base" / "model.npz"),
                 str(tmp_path / "layers.json"), "-o", str(tmp_path / "m.bin")])
    err = capsys.readouterr().err
    assert code == 1 and "layers.json line 5 column 1: not JSON" in err, err


def test_import_then_export_gives_torchs_keys_shapes_and_values(tmp_path):
    manifest = json.loads((FIXTURES / "manifest.json").read_text())
    for variant in VARIANTS:
        folder = FIXTURES / variant
        import_npz(folder / "model.npz", read_description(folder / "layers.json"),
                   tmp_path / "m.bin")
        assert main(["export-torch", str(tmp_path / "m.bin"), "-o", str(tmp_path / "back.npz")]) == 0
        back, original = read_state_dict(tmp_path / "back.npz"), read_state_dict(folder / "model.npz")
        torch_keys = manifest["variants"][variant]["state_dict"]
        assert {k: list(v.shape) for k, v in back.items()} == torch_keys
        assert all(back[k].tobytes() == original[k].tobytes() for k in original)
