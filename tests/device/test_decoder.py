"""The decoder on the device (issue 36): the fixtures of tests/board/case_decoder.py, from the
PyTorch model of tests/fixtures/llama2c/ (make_llama2c_fixtures.py) imported as import-llama2c
does it, a small decoder and the NumPy reference's gradients, a tokenizer and the host's
encoding of a few texts with it; and the tokenizer's own checks on the host."""

import tempfile
from pathlib import Path

import numpy as np
import pytest

from board_cases import board_test
from tinyattn_host import modelfile
from tinyattn_host.device_modules import device_module
from tinyattn_host.interop.llama2c import model_config, read_checkpoint
from tinyattn_host.reference.decoder import lm_backward, lm_forward
from tinyattn_host.reference.kinds import param_shapes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama2c"
TOKENIZER = device_module("lm/tokenizer")


def model_file(tmp_path, shared):
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    if shared:
        header["shared"] = True
        arrays.pop("%d.W" % (header["n_layers"] + 2))
    path = tmp_path / "model.bin"
    modelfile.write_model(path, modelfile.SEQUENTIAL, {"config": model_config(header)}, arrays)
    return path.read_bytes()


def small_fixture():
    rng = np.random.default_rng(36)
    config = [["Embedding", 13, 8], ["DecoderBlock", 8, 4, 2, 12, 16, 1e-5, "pairs", 10000.0],
              ["DecoderBlock", 8, 4, 1, 6, 16, 1e-5, "half", 500.0], ["RMSNorm", 8, 1e-5],
              ["Classifier", 8, 13, True]]
    params = {"%d.%s" % (i, n): (rng.normal(0, 0.4, s) + (1.0 if "gamma" in n else 0.0))
              .astype(np.float32) for i, spec in enumerate(config)
              for n, s in param_shapes(spec).items()}
    tokens = [3, 1, 4, 1, 5, 9, 2, 6, 12]
    wide = {k: v.astype(np.float64) for k, v in params.items()}
    y, caches = lm_forward(config, wide, tokens)
    G = rng.standard_normal(y.shape).astype(np.float32)
    grads = lm_backward(config, wide, caches, G.astype(np.float64))
    return {"config": config, "tokens": tokens, "y": y, "G": G,
            **{"p." + k: v for k, v in params.items()}, **{"g." + k: v for k, v in grads.items()}}


def tiny_tokenizer():
    """<unk>, <s>, </s>, the 256 bytes, then pieces whose merges the texts exercise."""
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    merged = [(b" ", -1.0), (b"a", -2.0), (b"b", -3.0), (b"ab", -0.5), (b" a", -0.7),
              (b" ab", -0.2), (b"\xc3\xa9", -4.0), (b"o", -5.0), (b"on", -1.5), (b"n", -6.0),
              (b"ce", -9.0), (b"c", -7.0), (b"e", -8.0)]
    return TOKENIZER.Tokenizer(pieces + [p for p, _ in merged],
                               [0.0] * 259 + [s for _, s in merged], 7)


TEXTS = ["ab", "a b", "once", "é", "ü!", "abab ab"]


def tokenizer_fixture():
    tok = tiny_tokenizer()
    return {"texts": TEXTS, "tokens": [tok.encode(t) for t in TEXTS]}


def fixtures():
    load = lambda name: np.load(FIXTURES / name).tolist()  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        return {"model.bin": model_file(Path(tmp), False),
                "shared.bin": model_file(Path(tmp), True),
                "torch": {"tokens": load("tokens.npy"), "greedy": load("greedy.npy"),
                          "logits": np.load(FIXTURES / "logits.npy"),
                          "shared_logits": np.load(FIXTURES / "shared_logits.npy")},
                "small": small_fixture(), "tokenizer.bin": tiny_tokenizer().to_bytes(),
                "tokenizer": tokenizer_fixture()}


def test_run_cs_encoding_on_a_hand_built_vocabulary():
    tok = tiny_tokenizer()
    ids = {p: i for i, p in enumerate(tok.pieces)}
    # " ab" beats " a" and "ab": the dummy prefix, then the best merge first
    assert tok.encode("ab") == [1, ids[b" ab"]]
    assert tok.encode("a b") == [1, ids[b" a"], ids[b" "], ids[b"b"]]
    assert tok.encode("once") == [1, ids[b" "], ids[b"on"], ids[b"ce"]]  # "ce" scores -9
    assert tok.encode("é") == [1, ids[b" "], ids[b"\xc3\xa9"]]
    assert tok.encode("ü", bos=False, eos=True) == [ids[b" "], 0xC3 + 3, 0xBC + 3, 2]
    assert tok.encode("") == [1]
    assert tok.decode(ids[b" ab"], 1) == b"ab" and tok.decode(ids[b" ab"], 5) == b" ab"
    assert tok.decode(0x41 + 3) == b"A"
    assert tok.decode_all(tok.encode("ü!")[1:]) == "ü!".encode()


def test_a_tokenizer_file_round_trips_and_bad_ones_name_the_byte(tmp_path):
    tok = tiny_tokenizer()
    (tmp_path / "t.bin").write_bytes(tok.to_bytes())
    back = TOKENIZER.read_tokenizer(str(tmp_path / "t.bin"), len(tok))
    assert back.pieces == tok.pieces and back.to_bytes() == tok.to_bytes()
    data = tok.to_bytes()
    for bad, words in ((data[:-1], "truncated at byte"), (data[:2], "not a llama2.c tokenizer"),
                       (data + b"\0", "is truncated")):
        (tmp_path / "bad.bin").write_bytes(bad)
        with pytest.raises(ValueError, match=words):
            TOKENIZER.read_tokenizer(str(tmp_path / "bad.bin"))
    with pytest.raises(ValueError, match="holds 272 tokens; the model's vocabulary is 512"):
        TOKENIZER.read_tokenizer(str(tmp_path / "t.bin"), 512)


test_decoder_on_board = board_test("case_decoder", fixtures, heap="8m")
