"""import-llama2c --int8 (issue 36): the int8 file of a checkpoint calibrated on token ids
(.npy) is the host quantizer's (tinyattn_host.quantize.lm, whose file is the board's own:
tests/device/test_int8_decoder.py); a text is encoded with the tokenizer; every bad
calibration file one line and exit 1; finetune refuses an int8 file (generate takes it:
tests/e2e/test_generate_e2e.py)."""

from pathlib import Path

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.__main__ import main
from tinyattn_host.interop.llama2c import model_config, read_checkpoint
from tinyattn_host.quantize import model_bytes
from tinyattn_host.quantize.lm import quantize_lm

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama2c"
STORIES = Path(__file__).resolve().parents[2] / "data" / "stories"


def test_int8_import_from_token_ids_is_the_host_quantizers_file(tmp_path):
    ids = np.load(FIXTURES / "tokens.npy").astype(np.int64)
    np.save(tmp_path / "ids.npy", ids)
    assert main(["import-llama2c", str(FIXTURES / "model.bin"), "-o", str(tmp_path / "q.bin"),
                 "--int8", str(tmp_path / "ids.npy")]) == 0
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    want = model_bytes(*quantize_lm(model_config(header), arrays, ids.tolist()))
    assert (tmp_path / "q.bin").read_bytes() == want
    kind, meta, _ = modelfile.read_model(tmp_path / "q.bin")
    assert kind == modelfile.QUANTIZED
    assert [layer["kind"] for layer in meta["layers"]] == \
        ["Embedding"] + ["DecoderBlock"] * 5 + ["RMSNorm", "Classifier"]
    assert (tmp_path / "q.bin").stat().st_size < 0.3 * (FIXTURES / "model.bin").stat().st_size


def test_a_text_is_encoded_with_the_tokenizer_and_the_int8_file_is_smaller(tmp_path):
    assert main(["import-llama2c", str(STORIES / "model.bin"), "-o", str(tmp_path / "q.bin"),
                 "--int8", str(STORIES / "stories.txt")]) == 0
    _, meta, _ = modelfile.read_model(tmp_path / "q.bin")
    assert meta["layers"][-1]["tied"] is True
    assert (tmp_path / "q.bin").stat().st_size < 0.3 * (STORIES / "model.bin").stat().st_size


@pytest.mark.parametrize("content, words", [
    (None, "no such calibration file"),
    (b"\xff\xfe not text", "is not UTF-8 text"),
    (b"\n\n  \n", "holds no text to calibrate on"),
    ("npy-float", "token ids must be a 1-D .npy of ints in [0, 512)"),
    ("npy-range", "token ids must be a 1-D .npy of ints in [0, 512)"),
])
def test_a_bad_calibration_file_is_one_line_and_exit_1(tmp_path, capsys, content, words):
    path = tmp_path / "calib.txt"
    if content == "npy-float":
        path = tmp_path / "calib.npy"
        np.save(path, np.zeros(4))
    elif content == "npy-range":
        path = tmp_path / "calib.npy"
        np.save(path, np.array([1, 512]))
    elif content is not None:
        path.write_bytes(content)
    tokenizer = ["--tokenizer", str(STORIES / "tokenizer.bin")] if content else []
    checkpoint = FIXTURES / "model.bin"
    if content in (b"\xff\xfe not text", b"\n\n  \n"):
        checkpoint = STORIES / "model.bin"
    code = main(["import-llama2c", str(checkpoint), "-o", str(tmp_path / "q.bin"),
                 "--int8", str(path)] + tokenizer)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and err[0].startswith("error: ") and words in err[0], err
    assert not (tmp_path / "q.bin").exists()


def test_a_text_without_its_tokenizer_is_one_line(tmp_path, capsys):
    (tmp_path / "model.bin").write_bytes((FIXTURES / "model.bin").read_bytes())
    (tmp_path / "t.txt").write_text("Once upon a time")
    assert main(["import-llama2c", str(tmp_path / "model.bin"), "-o", str(tmp_path / "q.bin"),
                 "--int8", str(tmp_path / "t.txt")]) == 1
    assert "its tokenizer.bin is needed" in capsys.readouterr().err


def test_finetune_refuses_an_int8_model_in_one_line(tmp_path, capsys):
    assert main(["import-llama2c", str(STORIES / "model.bin"), "-o", str(tmp_path / "q.bin"),
                 "--int8", str(STORIES / "stories.txt")]) == 0
    capsys.readouterr()
    assert main(["finetune", str(tmp_path / "q.bin"), str(STORIES / "stories.txt"), "-o",
                 str(tmp_path / "t.bin"), "--tokenizer", str(STORIES / "tokenizer.bin")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is an int8 model: fine-tune the float one" in err[0], err


def test_the_host_quantizer_refuses_a_planned_models_layer_inside_a_language_model():
    """A Dense between the Embedding and the Classifier (convert_lm's refusal on the board)."""
    config = [["Embedding", 6, 4], ["Dense", 4, 4, False], ["Classifier", 4, 6, False]]
    params = {"0.W": np.ones((6, 4)), "1.W": np.eye(4), "2.W": np.ones((6, 4))}
    with pytest.raises(ValueError, match="no int8 form for a Dense layer of a language model"):
        quantize_lm(config, params, [1, 2, 3])
