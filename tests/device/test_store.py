"""save/load on the device (tests/board/case_store.py on the board): round trips, the host's
files loaded and saved again byte for byte, bad files; and an interpreter killed in the middle
of a save (host-driven, tests/board/scripts/killed_save.py)."""

import json
import os
import signal
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from board_cases import BOARD_DIR, board_test
from tinyattn_host import modelfile
from tinyattn_host.virtual import unixport
from tinyattn_host.checks.run_check import FLOAT_TOLERANCE, IRIS_CONFIG, random_model
from tinyattn_host.reference.sequential import sequential_forward

PARAM_NAMES = ["0.W", "0.b"] + ["3." + n for n in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")] \
    + ["5.W", "5.b"]
KILLED_SAVE = BOARD_DIR / "scripts" / "killed_save.py"


def host_params():
    """The host's model: random_model(4) changed a little, float32."""
    return {name: (a * 2 + 0.25).astype(np.float32) for name, a in random_model(4).items()}


def written(kind, meta, arrays):
    """The bytes of modelfile.write_model(path, kind, meta, arrays)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.bin"
        modelfile.write_model(path, kind, meta, arrays)
        return path.read_bytes()


def model_bytes(params, kind="sequential"):
    """A model file of IRIS_CONFIG with `params`, in the device's order (collect_params)."""
    return written(kind, {"config": IRIS_CONFIG},
                   {name: params[name] for name in PARAM_NAMES if name in params})


def bad_files():
    """{name: bytes}: the truncated, foreign, corrupt and misfit files the device refuses."""
    data = model_bytes(random_model(5))
    files = {}
    cuts = [0, 5, 9, 30, len(data) // 2, len(data) - 9, len(data) - 1]
    for cut in cuts:
        files[f"cut{cut}"] = data[:cut]
    files["foreign"] = b"PK\x03\x04 a zip file, not a model" * 10
    files["v2"] = data[:8] + struct.pack("<H", 2) + data[10:]
    flipped = bytearray(data)
    flipped[len(data) - 12] ^= 0x40  # inside the last array's numbers
    files["flipped"] = bytes(flipped)
    files["longer"] = data + b"\0\0"
    arrays = random_model(7)
    files["shape.bin"] = model_bytes(dict(arrays, **{"0.W": np.zeros((32, 5), np.float32)}))
    files["missing.bin"] = model_bytes({k: v for k, v in arrays.items() if k != "5.b"})
    files["kind.bin"] = model_bytes(arrays, kind="int8-sequential")
    return files, cuts


def cut_messages(cuts):
    """What loading each cut must say; the cuts inside the meta block apart (a test of their
    own: the device called them "not valid JSON")."""
    start = len(modelfile.MAGIC) + 2 + 2 + len("sequential") + 4
    end = start + len(json.dumps({"config": IRIS_CONFIG}))
    return {"cuts": [[cut, "not a tinyattn model file" if i < 2 else "truncated"]
                     for i, cut in enumerate(cuts) if not start < cut < end],
            "in_meta": [cut for cut in cuts if start < cut < end]}


def absurd_files():
    """Small files with a valid CRC whose shapes are absurd."""
    return {
        "huge.bin": written("sequential", {"config": [["Dense", 10 ** 7, 10 ** 7, True]]},
                            {"0.W": np.zeros((1, 1)), "0.b": np.zeros(1)}),
        "empty.bin": written("sequential", {"config": [["Dense", 1, 1, True]]},
                             {"0.W": np.zeros((0, 10 ** 9)), "0.b": np.zeros(1)}),
        "entry.bin": written("sequential", {"config": [["Dense", 1]]}, {"0.W": np.zeros((1, 1))}),
    }


def int8_bytes():
    return written("int8-test", {"scale": 0.25}, {
        "w": np.array([[127, -128, 0], [5, -7, 1]], np.int8),
        "acc": np.array([2 ** 31 - 1, -2 ** 31], np.int32),
        "u": np.array([[0, 255]], np.uint8), "f": np.array([[1.5, -2.0]], np.float32)})


def make_fixtures():
    params = host_params()
    x = np.random.default_rng(4).standard_normal((3, 4))
    y, _ = sequential_forward(IRIS_CONFIG, {k: v.astype(np.float64) for k, v in params.items()}, x)
    bad, cuts = bad_files()
    return {
        "x": {"x": np.random.default_rng(3).standard_normal((3, 4))},
        "host": {"config": IRIS_CONFIG, "x": x, "y": y,
                 "atol": FLOAT_TOLERANCE * max(1.0, float(np.abs(y).max()))},
        "host.bin": model_bytes(params),
        "int8.bin": int8_bytes(),
        "cuts": cut_messages(cuts),
        **bad, **absurd_files(),
    }


# 256k: a board's heap without PSRAM, with a real ulab; the pure-Python stand-in's own module
# and lists take more than ulab (its figures mean nothing), so it gets twice that
STORE_HEAP = "256k" if unixport.has_ulab(unixport.interpreter()) else "512k"
test_store_on_board = board_test("case_store", make_fixtures, heap=STORE_HEAP)


# ---- the host's side of the same files ---------------------------------------------------------
def test_the_host_reads_the_files_it_gives_the_device():
    """What the device's bytes are compared with reads back on the host as written: the names
    in the device's order, float32, integer dtypes kept."""
    params = host_params()
    kind, meta, arrays = read_bytes(model_bytes(params))
    assert kind == "sequential" and meta == {"config": IRIS_CONFIG}
    assert list(arrays) == PARAM_NAMES
    for name in PARAM_NAMES:
        assert arrays[name].dtype == np.float32 and np.array_equal(arrays[name], params[name])
    kind, meta, arrays = read_bytes(int8_bytes())
    assert (kind, meta) == ("int8-test", {"scale": 0.25})
    assert arrays["w"].dtype == np.int8 and arrays["w"].tolist() == [[127, -128, 0], [5, -7, 1]]
    assert arrays["acc"].dtype == np.int32 and arrays["acc"].tolist() == [2 ** 31 - 1, -2 ** 31]
    assert arrays["u"].dtype == np.uint8 and arrays["f"].dtype == np.float32


def test_the_host_rejects_the_bad_files_too():
    bad, cuts = bad_files()
    for cut in cuts[2:]:
        with pytest.raises(modelfile.ModelFileError, match="truncated"):
            read_bytes(bad[f"cut{cut}"])
    for name in ("foreign", "v2", "flipped", "longer"):
        with pytest.raises(modelfile.ModelFileError):
            read_bytes(bad[name])


def read_bytes(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.bin"
        path.write_bytes(data)
        return modelfile.read_model(path)


# ---- host-driven: SIGKILL in the middle of a save --------------------------------------------
def test_a_save_killed_midway_leaves_the_earlier_model(tmp_path):
    """Host-driven on the unix port: the host kills the interpreter (SIGKILL) while a save
    stalls halfway through its .tmp file, which no board case can do."""
    path = tmp_path / "model.bin"
    env = dict(os.environ, MICROPYPATH=unixport.search_path())
    proc = subprocess.Popen([unixport.interpreter(), str(KILLED_SAVE), "save", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.strip() == "midway", line + proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    partial = tmp_path / "model.bin.tmp"
    assert partial.exists() and 600 < partial.stat().st_size < 2500
    with pytest.raises(modelfile.ModelFileError, match="truncated"):
        modelfile.read_model(partial)
    out = unixport.run_file(KILLED_SAVE, args=("check", str(path)))
    assert out.strip() == "ok", out
