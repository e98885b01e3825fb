"""save/load on the device: round trips, the host reading the device's files and back, bad
files, and an interpreter killed in the middle of a save."""

import os
import signal
import struct
import subprocess
import zlib

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host import modelfile, unixport
from tinyattn_host.unixport import MicroPythonError

PARAM_NAMES = ["0.W", "0.b"] + ["3." + n for n in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")] \
    + ["5.W", "5.b"]


def save_model(path, seed):
    """Save iris_model(seed) on the device; return its parameters and its output on x."""
    x = np.random.default_rng(seed).standard_normal((3, 4))
    return run_device(f"""
from tinyattn import iris_model, save
m = iris_model({seed})
save(m, {str(path)!r})
OUT['y'] = m.forward(IN['x'])
for name, p, g in m.collect_params():
    OUT[name] = p
""", {"x": x}), x


def test_round_trip_on_the_device_and_on_the_host(tmp_path):
    path = tmp_path / "model.bin"
    saved, x = save_model(path, 3)
    assert not (tmp_path / "model.bin.tmp").exists()
    out = run_device(f"""
from tinyattn import iris_model, load
m = load({str(path)!r})
OUT['y'] = m.forward(IN['x'])
OUT['config'] = m.config()
for name, p, g in m.collect_params():
    OUT[name] = p
again = iris_model(3)
OUT['same'] = [p.tolist() == q.tolist() for (_, p, _), (_, q, _) in
               zip(m.collect_params(), again.collect_params())]
""", {"x": x})
    assert out["same"] == [True] * 12  # bit for bit, compared on the device
    assert np.array_equal(out["y"], saved["y"])
    kind, meta, arrays = modelfile.read_model(path)
    assert kind == "sequential" and meta["config"] == out["config"]
    assert list(arrays) == PARAM_NAMES
    for name in PARAM_NAMES:
        assert arrays[name].dtype == np.float32
        # the values came back as text: within one float32 step
        np.testing.assert_array_max_ulp(arrays[name], saved[name].astype(np.float32), 1)


def test_a_file_written_on_the_host_loads_on_the_device(tmp_path):
    path = tmp_path / "host.bin"
    saved, x = save_model(path, 4)
    kind, meta, arrays = modelfile.read_model(path)
    changed = {name: a * 2 + 0.25 for name, a in arrays.items()}
    modelfile.write_model(path, kind, meta, changed)
    run_device(f"""
from tinyattn import load, save
save(load({str(path)!r}), {str(path) + "2"!r})
""")
    kind2, meta2, again = modelfile.read_model(str(path) + "2")
    assert (kind2, meta2) == (kind, meta)
    for name in PARAM_NAMES:
        assert np.array_equal(again[name], changed[name].astype(np.float32)), name


def test_integer_arrays_for_quantized_models(tmp_path):
    path = tmp_path / "int8.bin"
    out = run_device(f"""
import array
from tinyattn.store import write_file, read_file
w = array.array('b', [127, -128, 0, 5, -7, 1])
write_file({str(path)!r}, 'int8-test', {{'scale': 0.25}},
           [('w', w, 'b', (2, 3)), ('acc', array.array('i', [2**31 - 1, -2**31]), 'i', (2,)),
            ('u', bytearray(b'\\x00\\xff'), 'B', (1, 2)), ('f', np.array([[1.5, -2.0]]))])
kind, meta, arrays = read_file({str(path)!r})
OUT['kind'], OUT['meta'] = kind, meta
OUT['arrays'] = [[name, list(shape), list(value) if not hasattr(value, 'shape') else value.tolist()]
                 for name, shape, value in arrays]
try:
    write_file({str(path)!r} + '2', 'x', {{}}, [('w', w, 'b', (4, 3))])
except ValueError as e:
    OUT['error'] = str(e)
""")
    assert out["kind"] == "int8-test" and out["meta"] == {"scale": 0.25}
    assert out["arrays"] == [["w", [2, 3], [127, -128, 0, 5, -7, 1]],
                             ["acc", [2], [2 ** 31 - 1, -2 ** 31]], ["u", [1, 2], [0, 255]],
                             ["f", [1, 2], [[1.5, -2.0]]]]
    kind, meta, arrays = modelfile.read_model(path)
    assert arrays["w"].dtype == np.int8 and arrays["w"].tolist() == [[127, -128, 0], [5, -7, 1]]
    assert arrays["acc"].dtype == np.int32 and arrays["acc"].tolist() == [2 ** 31 - 1, -2 ** 31]
    assert arrays["u"].dtype == np.uint8 and arrays["f"].dtype == np.float32
    assert "shape" in out["error"] and not (tmp_path / "int8.bin2").exists()


def load_error(path):
    with pytest.raises(MicroPythonError) as err:
        run_device(f"from tinyattn import load\nload({str(path)!r})")
    assert err.value.kind == "ValueError", err.value.output
    return err.value.message


def test_truncated_files_are_rejected(tmp_path):
    path = tmp_path / "model.bin"
    save_model(path, 5)
    data = path.read_bytes()
    cuts = [0, 5, 9, 30, len(data) // 2, len(data) - 9, len(data) - 1]
    script = ["from tinyattn import load", "errors = []"]
    for cut in cuts:
        (tmp_path / f"cut{cut}").write_bytes(data[:cut])
    out = run_device(f"""
from tinyattn import load
errors = []
for cut in {cuts!r}:
    try:
        load({str(tmp_path)!r} + '/cut%d' % cut)
        errors.append('loaded')
    except ValueError as e:
        errors.append(str(e))
OUT['errors'] = errors
""")
    assert "not a tinyattn model file" in out["errors"][0]
    assert "not a tinyattn model file" in out["errors"][1]
    for message in out["errors"][2:]:
        assert "truncated" in message, message
    for cut in cuts[2:]:
        with pytest.raises(modelfile.ModelFileError, match="truncated"):
            modelfile.read_model(tmp_path / f"cut{cut}")


def test_foreign_corrupt_and_wrong_version_files_are_rejected(tmp_path):
    path = tmp_path / "model.bin"
    save_model(path, 6)
    data = path.read_bytes()
    (tmp_path / "foreign").write_bytes(b"PK\x03\x04 a zip file, not a model" * 10)
    assert "not a tinyattn model file" in load_error(tmp_path / "foreign")
    (tmp_path / "v2").write_bytes(data[:8] + struct.pack("<H", 2) + data[10:])
    assert "format version 2" in load_error(tmp_path / "v2") and "version 1" in load_error(tmp_path / "v2")
    flipped = bytearray(data)
    flipped[len(data) - 12] ^= 0x40  # inside the last array's numbers
    (tmp_path / "flipped").write_bytes(bytes(flipped))
    assert "checksum" in load_error(tmp_path / "flipped")
    (tmp_path / "longer").write_bytes(data + b"\0\0")
    assert "2 unexpected bytes" in load_error(tmp_path / "longer")
    for name in ("foreign", "v2", "flipped", "longer"):
        with pytest.raises(modelfile.ModelFileError):
            modelfile.read_model(tmp_path / name)


def test_arrays_that_do_not_fit_the_config_are_rejected(tmp_path):
    path = tmp_path / "model.bin"
    save_model(path, 7)
    kind, meta, arrays = modelfile.read_model(path)
    wrong = dict(arrays, **{"0.W": np.zeros((32, 5), np.float32)})
    modelfile.write_model(tmp_path / "shape.bin", kind, meta, wrong)
    message = load_error(tmp_path / "shape.bin")
    assert "0.W" in message and "(32, 5)" in message and "(32, 4)" in message
    missing = {k: v for k, v in arrays.items() if k != "5.b"}
    modelfile.write_model(tmp_path / "missing.bin", kind, meta, missing)
    assert "5.b" in load_error(tmp_path / "missing.bin")
    modelfile.write_model(tmp_path / "kind.bin", "int8-sequential", meta, arrays)
    assert "'int8-sequential'" in load_error(tmp_path / "kind.bin")


KILLED_SAVE = """
import sys, time
from tinyattn import iris_model, save, store
path = sys.argv[1]
save(iris_model(1), path)

class SlowFile:
    # a file that stops for good after 600 bytes, so the test can kill the interpreter there
    def __init__(self, f):
        self.f, self.written = f, 0
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        self.f.close()
    def write(self, data):
        self.f.write(data)
        self.written += len(data)
        if self.written > 600:
            self.f.flush()
            print('midway')
            time.sleep(60)

store.open = lambda name, mode: SlowFile(open(name, mode))
save(iris_model(2), path)
print('finished')
"""


def test_a_save_killed_midway_leaves_the_earlier_model(tmp_path):
    script = tmp_path / "killed.py"
    script.write_text(KILLED_SAVE)
    path = tmp_path / "model.bin"
    env = dict(os.environ, MICROPYPATH=unixport.search_path())
    proc = subprocess.Popen([unixport.interpreter(), str(script), str(path)],
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
    out = run_device(f"""
from tinyattn import iris_model, load
m = load({str(path)!r})
first = iris_model(1)
OUT['same'] = [p.tolist() == q.tolist() for (_, p, _), (_, q, _) in
               zip(m.collect_params(), first.collect_params())]
""")
    assert out["same"] == [True] * 12
    assert "truncated" in load_error(partial)


def test_absurd_shapes_in_a_good_file_are_refused_before_anything_is_allocated(tmp_path):
    """A small file with a valid CRC: a config asking for 10^7 x 10^7 weights, and an array
    of 0 x 10^9 (no bytes, a billion rows). Both refused at once, naming what is wrong."""
    huge = tmp_path / "huge.bin"
    modelfile.write_model(huge, "sequential", {"config": [["Dense", 10 ** 7, 10 ** 7, True]]},
                          {"0.W": np.zeros((1, 1)), "0.b": np.zeros(1)})
    empty = tmp_path / "empty.bin"
    modelfile.write_model(empty, "sequential", {"config": [["Dense", 1, 1, True]]},
                          {"0.W": np.zeros((0, 10 ** 9)), "0.b": np.zeros(1)})
    bad_entry = tmp_path / "entry.bin"
    modelfile.write_model(bad_entry, "sequential", {"config": [["Dense", 1]]},
                          {"0.W": np.zeros((1, 1))})
    out = run_device(f"""
from tinyattn import load
OUT['errors'] = devio.value_errors({{name: (lambda p=p: load(p)) for name, p in
    (('huge', {str(huge)!r}), ('empty', {str(empty)!r}), ('entry', {str(bad_entry)!r}))}})
""", heap="256k")
    errors = out["errors"]
    assert "array 0.W must be float32 of shape (10000000, 10000000), got (1, 1)" in errors["huge"]
    assert "array 0.W has shape (0, 1000000000); every dimension must be >= 1" in errors["empty"]
    assert "config entry 0: ['Dense', 1]: must be ['Dense', in_features, out_features, use_bias]" \
        in errors["entry"]
