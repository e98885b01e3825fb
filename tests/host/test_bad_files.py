"""Every command of `python -m tinyattn_host` that reads a file meets a bad one of each kind
(empty, truncated, wrong format, not UTF-8, NaN, missing, the wrong kind of model, one whose
fields disagree) and a bad output path or argument: one `error:` line on stderr, the right
exit status (1 a bad file, 2 a bad command line), checked before any work (issue 39)."""

import json

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.__main__ import main
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.vowels import VOWELS_DIR

NO_PORT = "/dev/ttyNONE"  # a command that gets past its file checks ends here: exit 2


def run(capsys, *argv):
    """(exit status, the one line on stderr) of the command, with nothing else on stderr."""
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("error: "), err
    return status, err


def good_model(path):
    modelfile.write_model(path, "sequential", {"config": IRIS_CONFIG}, random_model(1))
    return path


def bad_models(tmp):
    """{what: (path, words of its error)} of model files of every kind of damage."""
    good = good_model(tmp / "good.bin").read_bytes()
    files = {"empty": (b"", "not a tinyattn model file"),
             "truncated": (good[:len(good) // 2], "truncated at byte"),
             "wrong format": (b"col1,col2\n1,2\n", "not a tinyattn model file"),
             "missing": (None, "No such file")}
    out = {what: (tmp / ("%s.bin" % what.replace(" ", "_")), words)
           for what, (data, words) in files.items()}
    for what, (data, _) in files.items():
        if data is not None:
            out[what][0].write_bytes(data)
    made = {"int8": ("quantized", {"layers": [{"kind": "Dense"}]}, {}, "holds an int8 model"),
            "config [[]]": ("sequential", {"config": [[]]}, {}, "config entry 0"),
            "no config": ("sequential", {"layers": []}, {}, "no model config"),
            "misfit": ("sequential", {"config": [["Dense", 4, 8], ["Dense", 5, 3]]},
                       {"0.W": np.zeros((8, 4), np.float32), "0.b": np.zeros(8, np.float32),
                        "1.W": np.zeros((3, 5), np.float32), "1.b": np.zeros(3, np.float32)},
                       "layer 1 (Dense)"),
            "wrong shape": ("sequential", {"config": IRIS_CONFIG},
                            dict(random_model(1), **{"0.W": np.zeros((2, 2), np.float32)}),
                            "array 0.W must be float32 of shape")}
    for what, (kind, meta, arrays, words) in made.items():
        path = tmp / ("%s.bin" % what.replace(" ", "_").replace("[", "").replace("]", ""))
        modelfile.write_model(path, kind, meta, arrays)
        out[what] = (path, words)
    path = tmp / "latin1.bin"  # a meta block that is not UTF-8, with a good CRC
    modelfile.write_model(path, "sequential", {"config": IRIS_CONFIG, "note": "\u00e9"},
                          random_model(1))
    path.write_bytes(_recrc(path.read_bytes().replace("\\u00e9".encode(), b"\xe9     ")))
    out["not UTF-8"] = (path, "do not decode")
    return out


def _recrc(data):
    import struct
    import zlib

    body = data[:-8]
    return body + struct.pack("<I", zlib.crc32(body)) + data[-4:]


MODEL_CASES = ["empty", "truncated", "wrong format", "missing", "int8", "config [[]]",
               "no config", "misfit", "wrong shape", "not UTF-8"]


@pytest.mark.parametrize("what", MODEL_CASES)
def test_check_model_refuses_a_bad_model_file_before_the_board(what, tmp_path, capsys):
    path, words = bad_models(tmp_path)[what]
    np.save(tmp_path / "x.npy", np.zeros((3, 4)))
    status, err = run(capsys, "check-model", path, tmp_path / "x.npy", "--port", NO_PORT)
    assert status == 1 and str(path) in err and words in err, err


@pytest.mark.parametrize("what", MODEL_CASES)
def test_export_torch_refuses_a_bad_model_file(what, tmp_path, capsys):
    path, words = bad_models(tmp_path)[what]
    (tmp_path / "layers.json").write_text("[]")
    status, err = run(capsys, "export-torch", path, "-o", tmp_path / "out.npz",
                      "--layers", tmp_path / "layers.json")
    assert status == 1 and str(path) in err and words in err, err
    assert not (tmp_path / "out.npz").exists()


def bad_arrays(tmp):
    """{what: (path, words)} of .npy files of every kind of damage."""
    np.save(tmp / "good.npy", np.zeros((3, 4)))
    good = (tmp / "good.npy").read_bytes()
    out = {}
    for what, data in (("empty", b""), ("truncated", good[:len(good) - 7]),
                       ("wrong format", b"1,2,3,4\n"), ("not UTF-8", b"\xe9\xff\xfe")):
        (tmp / ("%s.npy" % what[:5])).write_bytes(data)
        out[what] = (tmp / ("%s.npy" % what[:5]), "")
    for what, value, words in (("NaN", np.full((3, 4), np.nan), "NaN or infinity"),
                               ("inf", np.full((3, 4), np.inf), "NaN or infinity"),
                               ("strings", np.array([["a"] * 4] * 3), "must be numbers"),
                               ("beyond float32", np.full((3, 4), 1e39), "NaN or infinity")):
        np.save(tmp / ("%s.npy" % what.replace(" ", "_")), value)
        out[what] = (tmp / ("%s.npy" % what.replace(" ", "_")), words)
    out["missing"] = (tmp / "none.npy", "No such file")
    return out


ARRAY_CASES = ["empty", "truncated", "wrong format", "not UTF-8", "NaN", "inf", "strings",
               "beyond float32", "missing"]


@pytest.mark.parametrize("what", ARRAY_CASES)
def test_check_model_refuses_bad_inputs_before_the_board(what, tmp_path, capsys):
    path, words = bad_arrays(tmp_path)[what]
    status, err = run(capsys, "check-model", good_model(tmp_path / "m.bin"), path,
                      "--port", NO_PORT)
    assert status == 1 and str(path) in err + str(path) and words in err, err


@pytest.mark.parametrize("what", [w for w in ARRAY_CASES if w != "beyond float32"])
def test_check_model_refuses_bad_expected_outputs_before_the_board(what, tmp_path, capsys):
    """An --expect of NaN used to PASS ('0.00e+00 against the expected outputs', exit 0)."""
    path, words = bad_arrays(tmp_path)[what]
    np.save(tmp_path / "x.npy", np.zeros((3, 4)))
    status, err = run(capsys, "check-model", good_model(tmp_path / "m.bin"),
                      tmp_path / "x.npy", "--expect", path, "--port", NO_PORT)
    assert status == 1 and words in err, err


def test_check_model_with_good_files_gets_to_the_board(tmp_path, capsys):
    """The control: good files pass every check above and fail only on the port."""
    np.save(tmp_path / "x.npy", np.zeros((3, 4)))
    np.save(tmp_path / "e.npy", np.zeros((3, 3)))
    status, err = run(capsys, "check-model", good_model(tmp_path / "m.bin"),
                      tmp_path / "x.npy", "--expect", tmp_path / "e.npy", "--port", NO_PORT)
    assert status == 2 and "no such port" in err, err


@pytest.mark.parametrize("argv, words", [
    (["--batch-size", "0"], "--batch-size: must be an int >= 1, got '0'"),
    (["--batch-size", "-3"], "--batch-size: must be an int >= 1, got '-3'"),
    (["--heap", "abc"], "--heap: 'abc': a heap size is"),
])
def test_check_model_refuses_a_bad_argument(argv, words, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.zeros((3, 4)))
    status, err = run(capsys, "check-model", good_model(tmp_path / "m.bin"),
                      tmp_path / "x.npy", "--port", "virtual", *argv)
    assert status == 2 and words in err, err


@pytest.mark.parametrize("command", ["run", "virtual-board", "bench", "vowels"])
@pytest.mark.parametrize("heap", ["abc", "1", "8k", "0m", "-3k", "2g"])
def test_a_heap_that_is_no_size_is_refused_before_anything_starts(command, heap, capsys):
    """--heap abc (or 1: 'Invalid command line arguments'; or 8k: a MemoryError at start)
    used to make a virtual board boot its interpreter again and again."""
    status, err = run(capsys, command, "--heap=" + heap)
    assert status == 2 and "%r: a heap size is" % heap in err, err


def test_virtual_heap_that_is_no_size_is_refused_before_anything_starts(monkeypatch):
    from tinyattn_host.errors import UsageError
    from tinyattn_host.virtual.virtual_board import VirtualBoard

    monkeypatch.setenv("VIRTUAL_HEAP", "abc")
    with pytest.raises(UsageError, match="VIRTUAL_HEAP='abc': a heap size is"):
        VirtualBoard()


@pytest.mark.parametrize("command", [["import-torch", "{tmp}/s.npz", "{tmp}/l.json"],
                                     ["export-torch", "{tmp}/m.bin"]])
def test_an_unwritable_output_is_refused_before_any_work(command, tmp_path, capsys):
    good_model(tmp_path / "m.bin")
    argv = [a.format(tmp=tmp_path) for a in command]
    for out, words in (("/missing/dir/out", "no folder /missing/dir"),
                       (str(tmp_path), "is a folder")):
        status, err = run(capsys, *argv, "-o", out)
        assert status == 2 and words in err, err


def bad_ts(tmp):
    """{what: (TRAIN file's bytes, words)}: the vowels data of every kind of damage."""
    good = (VOWELS_DIR / "JapaneseVowels_TRAIN.ts").read_bytes()
    head, _, rest = good.partition(b"@data\n")
    line = rest.split(b"\n")[0]
    values = line.split(b":")

    def with_line(new):
        return head + b"@data\n" + new + b"\n" + rest

    return {
        "empty": (b"", "ends before @data"),
        "NaN": (with_line(line.replace(values[0].split(b",")[0], b"NaN", 1)), "NaN"),
        "question mark": (with_line(line.replace(values[0].split(b",")[0], b"?", 1)),
                          "not a number"),
        "cut short": (with_line(line[:len(line) // 2]), "line"),
        "11 channels": (with_line(b":".join(values[1:])), "channels and a label"),
        "unknown label": (with_line(b":".join(values[:-1] + [b"10"])), "class '10'"),
        "latin-1": (with_line(line.replace(b".", b"\xe9", 1)), "not UTF-8"),
        "wrong format": (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "line 1"),
    }


@pytest.mark.parametrize("what", ["empty", "NaN", "question mark", "cut short", "11 channels",
                                  "unknown label", "latin-1", "wrong format", "missing TEST"])
def test_vowels_refuses_a_bad_data_file_before_training(what, tmp_path, capsys):
    for name in ("JapaneseVowels_TRAIN.ts", "JapaneseVowels_TEST.ts"):
        (tmp_path / name).write_bytes((VOWELS_DIR / name).read_bytes())
    if what == "missing TEST":
        (tmp_path / "JapaneseVowels_TEST.ts").unlink()
        words, name = "No such file", "JapaneseVowels_TEST.ts"
    else:
        data, words = bad_ts(tmp_path)[what]
        name = "JapaneseVowels_TRAIN.ts"
        (tmp_path / name).write_bytes(data)
    status, err = run(capsys, "vowels", "--data", tmp_path)
    assert status == 1 and str(tmp_path / name) in err and words in err, err
    assert "epoch" not in capsys.readouterr().out


def test_vowels_checks_save_before_training(capsys):
    """--save /missing/dir/v.bin used to train for 32 s, then fail on v.bin.tmp."""
    status, err = run(capsys, "vowels", "--save", "/missing/dir/v.bin")
    assert status == 2 and "--save /missing/dir/v.bin: no folder /missing/dir" in err, err


@pytest.mark.parametrize("data, words", [
    (b"", "has no viper or native function"), (b"x = 1\n", "has no viper or native function"),
    (b"\xe9\xff", "is not UTF-8 text"), (b"\x7fELF" + bytes(60), "SyntaxError"),
    (None, "no such source file")])
def test_chipcost_refuses_a_bad_source_file(data, words, tmp_path, capsys):
    path = tmp_path / "k.py"
    if data is not None:
        path.write_bytes(data)
    status, err = run(capsys, "chipcost", path)
    assert status == 1 and words in err, err


def _state_files(tmp):
    """{what: (argv of import-torch, words)}: bad state dicts and descriptions."""
    np.savez(tmp / "good.npz", **{"0.weight": np.zeros((3, 4)), "0.bias": np.zeros(3)})
    np.savez(tmp / "nan.npz", **{"0.weight": np.full((3, 4), np.nan), "0.bias": np.zeros(3)})
    good = (tmp / "good.npz").read_bytes()
    (tmp / "trunc.npz").write_bytes(good[:len(good) // 2])
    (tmp / "empty.npz").write_bytes(b"")
    (tmp / "text.npz").write_bytes(b"abc")
    (tmp / "l.json").write_text(json.dumps([{"prefix": "0", "layer": ["Dense", 4, 3, True]}]))
    (tmp / "latin1.json").write_bytes(b"[\xe9]")
    (tmp / "cut.json").write_text("[{")
    (tmp / "empty.json").write_text("")
    return {"empty npz": (["empty.npz", "l.json"], "is empty"),
            "truncated npz": (["trunc.npz", "l.json"], "cut short"),
            "wrong format npz": (["text.npz", "l.json"], "not a state_dict"),
            "NaN npz": (["nan.npz", "l.json"], "NaN or infinity"),
            "missing npz": (["none.npz", "l.json"], "No such file"),
            "not UTF-8 json": (["good.npz", "latin1.json"], "not a UTF-8 text file"),
            "truncated json": (["good.npz", "cut.json"], "not JSON"),
            "empty json": (["good.npz", "empty.json"], "not JSON"),
            "missing json": (["good.npz", "none.json"], "No such file")}


@pytest.mark.parametrize("what", ["empty npz", "truncated npz", "wrong format npz", "NaN npz",
                                  "missing npz", "not UTF-8 json", "truncated json",
                                  "empty json", "missing json"])
def test_import_torch_refuses_a_bad_file(what, tmp_path, capsys):
    names, words = _state_files(tmp_path)[what]
    status, err = run(capsys, "import-torch", *(tmp_path / n for n in names),
                      "-o", tmp_path / "m.bin")
    assert status == 1 and words in err, err
    assert not (tmp_path / "m.bin").exists()


@pytest.mark.parametrize("data", [b"", b"\xe9\x00", b"\xe9" + bytes(100)])
def test_flash_refuses_a_bad_firmware_file(data, tmp_path, capsys):
    (tmp_path / "fw.bin").write_bytes(data)
    status, err = run(capsys, "flash", "--firmware", tmp_path / "fw.bin", "--dry-run",
                      "--port", NO_PORT)
    assert status == 1 and "refusing to flash" in err, err
