"""llama2.c checkpoints on the host (issue 36): the reference decoder against PyTorch's logits
and greedy tokens (tests/fixtures/make_llama2c_fixtures.py), import-llama2c then
export-llama2c byte for byte, the decoder's backward against finite differences, and every
bad checkpoint refused in one line."""

import struct
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host.__main__ import main
from tinyattn_host.interop.llama2c import (Llama2cError, header_of, model_config,
                                            read_checkpoint, write_checkpoint)
from tinyattn_host.reference.decoder import lm_backward, lm_forward
from tinyattn_host import modelfile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama2c"


def wide(arrays):
    return {k: v.astype(np.float64) for k, v in arrays.items()}


def test_the_reference_computes_torchs_logits_at_every_position():
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    assert (header["dim"], header["hidden_dim"], header["n_layers"], header["n_heads"],
            header["n_kv_heads"], header["vocab_size"], header["seq_len"],
            header["shared"]) == (64, 172, 5, 8, 4, 512, 512, False)
    tokens = np.load(FIXTURES / "tokens.npy")
    logits, _ = lm_forward(model_config(header), wide(arrays), tokens)
    torch_logits = np.load(FIXTURES / "logits.npy")
    assert logits.shape == torch_logits.shape == (24, 512)
    assert np.max(np.abs(logits - torch_logits)) < 1e-6 * np.max(np.abs(torch_logits))


def test_a_tied_classifier_uses_the_embedding_as_torch_does():
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    header["shared"] = True
    config = model_config(header)
    arrays.pop("%d.W" % (len(config) - 1))
    logits, _ = lm_forward(config, wide(arrays), np.load(FIXTURES / "tokens.npy"))
    expected = np.load(FIXTURES / "shared_logits.npy")
    assert np.max(np.abs(logits - expected)) < 1e-6 * np.max(np.abs(expected))


def test_greedy_decoding_of_the_reference_gives_torchs_32_tokens():
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    config, params = model_config(header), wide(arrays)
    sequence = list(np.load(FIXTURES / "tokens.npy")[:4])
    for _ in range(32):
        logits, _ = lm_forward(config, params, sequence)
        sequence.append(int(np.argmax(logits[-1])))
    assert sequence[4:] == list(np.load(FIXTURES / "greedy.npy"))


def test_import_then_export_is_the_same_file_byte_for_byte(tmp_path, capsys):
    model = tmp_path / "model.tinyattn"
    assert main(["import-llama2c", str(FIXTURES / "model.bin"), "-o", str(model)]) == 0
    assert "5 decoder blocks" in capsys.readouterr().out
    kind, meta, arrays = modelfile.read_model(model)
    assert meta["config"][0] == ["Embedding", 512, 64]
    assert meta["config"][1] == ["DecoderBlock", 64, 8, 4, 172, 512, 1e-5, "pairs", 10000.0]
    assert arrays["1.attention.wk"].shape == (32, 64)  # 4 key/value heads of 8
    assert main(["export-llama2c", str(model), "-o", str(tmp_path / "back.bin")]) == 0
    assert (tmp_path / "back.bin").read_bytes() == (FIXTURES / "model.bin").read_bytes()


def test_a_shared_classifier_round_trips_and_a_model_without_tables_gets_export_pys(tmp_path):
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    header["shared"] = True
    config = model_config(header)
    arrays.pop("%d.W" % (len(config) - 1))
    tables = arrays.pop("host.freq_cis_real"), arrays.pop("host.freq_cis_imag")
    write_checkpoint(tmp_path / "shared.bin", config, arrays)
    data = (tmp_path / "shared.bin").read_bytes()
    assert struct.unpack("<7i", data[:28])[5] == 512  # positive: shared
    back_header, back = read_checkpoint(tmp_path / "shared.bin")
    assert back_header["shared"] and "7.W" not in back
    for name, value in arrays.items():
        assert np.array_equal(back[name], value), name
    for mine, torchs in zip((back["host.freq_cis_real"], back["host.freq_cis_imag"]), tables):
        assert np.max(np.abs(mine - torchs)) <= 2 ** -23  # torch's float32 cos, sin: a bit off
    write_checkpoint(tmp_path / "again.bin", config, back)
    assert (tmp_path / "again.bin").read_bytes() == data


def test_export_refuses_a_model_llama2c_cannot_run(tmp_path, capsys):
    config = [["Dense", 4, 3, True]]
    modelfile.write_model(tmp_path / "dense.bin", modelfile.SEQUENTIAL, {"config": config},
                          {"0.W": np.zeros((3, 4)), "0.b": np.zeros(3)})
    assert main(["export-llama2c", str(tmp_path / "dense.bin"), "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "llama2.c runs Embedding" in err
    with pytest.raises(Llama2cError, match="rotary pairs"):
        header, _ = read_checkpoint(FIXTURES / "model.bin")
        config = model_config(header)
        config[1][7] = "half"
        header_of(config)


def _bad_checkpoints(tmp):
    good = (FIXTURES / "model.bin").read_bytes()
    header = list(struct.unpack("<7i", good[:28]))

    def with_header(**changes):
        fields = dict(zip(("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads",
                           "vocab_size", "seq_len"), header))
        fields.update(changes)
        return struct.pack("<7i", *fields.values()) + good[28:]

    nan = bytearray(good)
    nan[28 + 4 * 100:28 + 4 * 101] = struct.pack("<f", float("nan"))
    cases = {
        "short": (good[:20], ["too short"]),
        "truncated": (good[:-4], ["1187608 bytes", "1187612"]),
        "kv": (with_header(n_kv_heads=3), ["n_kv_heads 3 does not divide n_heads 8"]),
        "heads": (with_header(n_heads=5), ["n_heads 5 does not split dim 64"]),
        "zero": (with_header(n_layers=0), ["n_layers is 0"]),
        "shared": (with_header(vocab_size=512), ["bytes; a llama2.c checkpoint", "shared"]),
        "nan": (bytes(nan), ["0.W holds NaN"]),
    }
    for name, (data, words) in cases.items():
        (tmp / name).write_bytes(data)
        yield tmp / name, words
    yield tmp / "missing.bin", ["No such file"]


def test_every_bad_checkpoint_is_one_line_and_exit_1(tmp_path, capsys):
    for path, words in _bad_checkpoints(tmp_path):
        code = main(["import-llama2c", str(path), "-o", str(tmp_path / "m.bin")])
        err = capsys.readouterr().err
        assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, (path, err)
        for word in words:
            assert word in err, (path, err)
        assert not (tmp_path / "m.bin").exists()


def _small_model(rope, tied, seed):
    rng = np.random.default_rng(seed)
    config = [["Embedding", 11, 8], ["DecoderBlock", 8, 4, 2, 6, 16, 1e-5, rope, 10000.0],
              ["DecoderBlock", 8, 4, 1, 5, 16, 1e-5, rope, 500.0], ["RMSNorm", 8, 1e-5],
              ["Classifier", 8, 11, tied]]
    from tinyattn_host.reference.kinds import param_shapes

    params = {"%d.%s" % (i, n): rng.normal(0, 0.5, shape) + (1.0 if "gamma" in n else 0.0)
              for i, spec in enumerate(config) for n, shape in param_shapes(spec).items()}
    return config, params


@pytest.mark.parametrize("rope, tied", [("pairs", False), ("half", True)])
def test_the_decoders_backward_matches_finite_differences(rope, tied):
    config, params = _small_model(rope, tied, 3)
    tokens = [3, 1, 4, 1, 5, 9, 2]
    weights = np.random.default_rng(4).normal(size=(len(tokens), 11))

    def loss(p):
        return float(np.sum(lm_forward(config, p, tokens)[0] * weights))

    logits, caches = lm_forward(config, params, tokens)
    grads = lm_backward(config, params, caches, weights)
    assert sorted(grads) == sorted(params)
    rng, eps = np.random.default_rng(5), 1e-6
    for name, value in params.items():
        for index in {tuple(rng.integers(0, s) for s in value.shape) for _ in range(4)}:
            plus, minus = dict(params), dict(params)
            plus[name], minus[name] = value.copy(), value.copy()
            plus[name][index] += eps
            minus[name][index] -= eps
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            assert abs(grads[name][index] - numeric) <= 1e-6 * max(1.0, abs(numeric)), name


def test_rotary_positions_make_attention_see_relative_offsets():
    """A block's output for a sequence does not depend on where the sequence starts when
    every query and key turns by the same extra angle (RoPE's relative property)."""
    from tinyattn_host.reference.decoder import block_forward

    config, params = _small_model("pairs", False, 6)
    p = {n.split(".", 1)[1]: v for n, v in params.items() if n.startswith("1.")}
    x = np.random.default_rng(7).normal(size=(5, 8))
    at0, _ = block_forward(config[1], p, x, start=0)
    at9, _ = block_forward(config[1], p, x, start=9)
    assert np.allclose(at0, at9, atol=1e-12)


def test_the_shipped_story_model_writes_readable_text():
    """data/stories: its tokenizer and checkpoint (made by train_stories.py) import, and the
    reference's greedy text after "Once upon a time" is the stories' English."""
    from tinyattn_host.device_modules import device_module

    stories = Path(__file__).resolve().parents[2] / "data" / "stories"
    header, arrays = read_checkpoint(stories / "model.bin")
    assert header["shared"] and header["vocab_size"] == 320
    tok = device_module("lm/tokenizer").read_tokenizer(str(stories / "tokenizer.bin"), 320)
    config, params = model_config(header), wide(arrays)
    tokens = tok.encode("Once upon a time")
    for _ in range(40):
        tokens.append(int(np.argmax(lm_forward(config, params, tokens)[0][-1])))
    text = tok.decode_all(tokens[1:]).decode()
    assert text.startswith("Once upon a time, there was a little "), text
    words = text.replace(",", " ").replace(".", " ").split()
    known = set((stories / "stories.txt").read_text().replace(",", " ").replace(".", " ").split())
    assert all(w in known for w in words[:-1]), words  # the last may be cut
