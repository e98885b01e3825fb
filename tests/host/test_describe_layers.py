"""layers.json by name (interop/named_layers.py) and import-torch --describe's draft
(interop/describe.py), held to the descriptions tests/fixtures/make_torch_fixtures.py wrote
from torch's own constructors."""

import json
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.__main__ import main
from tinyattn_host.interop.named_layers import named, positional

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MODELS = [FIXTURES / "torch" / v for v in ("base", "norm_first", "gelu", "dropout")] + \
    [p for p in [FIXTURES / "sensor"] if (p / "model.npz").exists()]


def describe(folder, capsys):
    assert main(["import-torch", "--describe", str(folder / "model.npz")]) == 0
    got = capsys.readouterr()
    return json.loads(got.out), got.err


@pytest.mark.parametrize("folder", MODELS, ids=lambda p: p.name)
def test_the_draft_is_the_fixtures_description_but_for_what_the_shapes_cannot_say(folder,
                                                                                    capsys):
    """Every kind, size, prefix, shape and the order are read from the state_dict; what it
    cannot read (nhead is guessed, dropout, activation, norm_first are PyTorch's defaults)
    is named in a comment and a note. nhead's guess (8 features a head) is right for these."""
    draft, notes = describe(folder, capsys)
    want = json.loads((folder / "layers.json").read_text())
    assert [e.get("prefix") for e in draft] == [e.get("prefix") for e in want]
    assert [e.get("shape") for e in draft] == [e.get("shape") for e in want]
    guessed = {"dropout", "activation", "norm_first"}
    for got, entry in zip(draft, want):
        layer = dict(got["layer"])
        if layer["kind"] == "TransformerEncoderLayer":
            assert "nhead" in got["comment"] and {"dropout", "activation", "norm_first"} <= \
                set(got["comment"].replace(",", " ").split())
            assert (layer["dropout"], layer["activation"], layer["norm_first"]) == \
                (0.1, "relu", False)  # PyTorch's defaults
            layer.update({k: v for k, v in named(entry["layer"]).items() if k in guessed})
        assert positional(layer) == entry["layer"]
    assert "number of heads" in notes and notes.count("\n") == 1 and "Traceback" not in notes


def test_a_bare_encoder_layer_has_no_sequence_length_and_the_note_says_so(capsys):
    draft, notes = describe_file(FIXTURES / "torch" / "bare" / "encoder_layer.npz", capsys)
    assert [e["layer"]["kind"] for e in draft] == ["Tokens", "TransformerEncoderLayer"]
    assert draft[1]["prefix"] == "" and draft[1]["layer"]["d_model"] == 8
    assert "the sequence length is not in the shapes" in notes


def describe_file(path, capsys):
    assert main(["import-torch", "--describe", str(path)]) == 0
    got = capsys.readouterr()
    return json.loads(got.out), got.err


def test_heads_divide_and_keys_no_layer_takes_are_named(tmp_path, capsys):
    E = 12  # 8 does not divide it: 1 head of 12 features
    np.savez(tmp_path / "m.npz", **{
        "pos": np.zeros((5, E), np.float32), "inp.weight": np.zeros((E, 3), np.float32),
        "inp.bias": np.zeros(E, np.float32),
        "attn.in_proj_weight": np.zeros((3 * E, E), np.float32),
        "attn.out_proj.weight": np.zeros((E, E), np.float32),
        "bn.running_mean": np.zeros(E, np.float32)})
    draft, notes = describe_file(tmp_path / "m.npz", capsys)
    kinds = [e["layer"]["kind"] for e in draft]
    assert kinds == ["Tokens", "Dense", "PositionalEmbedding", "SelfAttention"]
    attention = draft[3]["layer"]
    assert attention["embed_dim"] % attention["num_heads"] == 0 and not attention["use_bias"]
    assert "bn.running_mean (12,)" in notes


def test_named_and_positional_descriptions_write_the_same_file(tmp_path):
    folder = FIXTURES / "torch" / "gelu"
    want = json.loads((folder / "layers.json").read_text())
    by_name = [dict(e, layer=named(e["layer"])) for e in want]
    by_name[0]["layer"] = {"kind": "Tokens", "seq_len": 16}
    del by_name[-1]["layer"]["use_bias"]  # a default left out
    (tmp_path / "named.json").write_text(json.dumps(by_name))
    for name, layers in (("named", tmp_path / "named.json"),
                         ("positional", folder / "layers.json")):
        assert main(["import-torch", str(folder / "model.npz"), str(layers),
                     "-o", str(tmp_path / (name + ".bin"))]) == 0
    named_file = modelfile.read_model(tmp_path / "named.bin")
    positional_file = modelfile.read_model(tmp_path / "positional.bin")
    assert named_file[1]["config"] == positional_file[1]["config"]
    for key, value in positional_file[2].items():
        assert np.array_equal(named_file[2][key], value), key
    assert main(["export-torch", str(tmp_path / "named.bin"), "-o", str(tmp_path / "b.npz")]) == 0


@pytest.mark.parametrize("change, message", [
    ({"embed_dim": 32}, "error: the description's entry 3: TransformerEncoderLayer has no "
                        "field 'embed_dim' (its fields: d_model, nhead, dim_feedforward, "),
    ({"nhead": None}, "error: the description's entry 3: TransformerEncoderLayer needs field "
                      "'nhead' (its fields: d_model, nhead, "),
    ({"kind": "Encoder"}, "error: the description's entry 3: unknown layer kind 'Encoder' "
                          "(known: Activation, "),
])
def test_an_unknown_or_missing_field_is_one_line_naming_it(tmp_path, capsys, change, message):
    folder = FIXTURES / "torch" / "base"
    layers = [dict(e, layer=named(e["layer"]))
              for e in json.loads((folder / "layers.json").read_text())]
    layers[3]["layer"].update(change)
    layers[3]["layer"] = {k: v for k, v in layers[3]["layer"].items() if v is not None}
    (tmp_path / "layers.json").write_text(json.dumps(layers))
    code = main(["import-torch", str(folder / "model.npz"), str(tmp_path / "layers.json"),
                 "-o", str(tmp_path / "m.bin")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith(message) and err.count("\n") == 1, err
    assert not (tmp_path / "m.bin").exists()


def test_import_torch_without_a_description_or_with_a_missing_file(tmp_path, capsys):
    npz = str(FIXTURES / "torch" / "base" / "model.npz")
    assert main(["import-torch", npz]) == 2
    assert "--describe" in capsys.readouterr().err
    assert main(["import-torch", "--describe", str(tmp_path / "nothere.npz")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothere.npz" in err and "Traceback" not in err
