"""save/load on the device: round trips, the host's files byte for byte, bad files refused.

The host writes model files with tinyattn_host.modelfile (fixtures *.bin); the device loads
them, saves them again and compares the bytes, so the two ends write the same format. The
scratch files go to the fixture folder (check.path). A save killed midway is host-driven
(tests/board/scripts/killed_save.py).
"""

import array
import os

import check
from tinyattn import iris_model, load, save
from tinyattn.store import read_file, write_file


def scratch(name):
    """A path for a file to write in the fixture folder, nothing there yet."""
    path = check.path(name)
    for old in (path, path + ".tmp"):
        if exists(old):
            os.remove(old)
    return path


def exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def same_bytes(got_path, want_path, what):
    got, want = file_bytes(got_path), file_bytes(want_path)
    if got != want:
        at = 0
        while at < min(len(got), len(want)) and got[at] == want[at]:
            at += 1
        raise AssertionError("%s: %d bytes, expected %d; the first difference at byte %d"
                             % (what, len(got), len(want), at))


def params_of(model):
    return [(name, p) for name, p, _ in model.collect_params()]


def same_params(got, want, what):
    """Bit for bit: the same names, shapes and values."""
    check.equal([n for n, _ in params_of(got)], [n for n, _ in params_of(want)], what + " names")
    for (name, p), (_, q) in zip(params_of(got), params_of(want)):
        check.equal(p.shape, q.shape, "%s %s shape" % (what, name))
        check.equal(p, q, "%s %s" % (what, name))


def load_error(name):
    """The text of the ValueError load() raises for fixture file `name`, its path left out
    (a word of the path must not pass for a word of the message)."""
    path = check.path(name)
    return check.raises(ValueError, load, path).replace(path, "PATH")


def same(got, want, what):
    if got != want:
        raise AssertionError("%s: %r, expected %r" % (what, got, want))


def has(message, *parts):
    for part in parts:
        if part not in message:
            raise AssertionError("%r is not in the message %r" % (part, message))


# ---- round trips ---------------------------------------------------------------------------
def test_save_then_load_gives_the_model_back_bit_for_bit():
    x = check.fixture("x")["x"]
    model = iris_model(3)
    path = scratch("model.bin")
    save(model, path)
    same(exists(path + ".tmp"), False, "a .tmp file left behind")
    again = load(path)
    same(again.config(), model.config(), "config")
    same_params(again, iris_model(3), "loaded")
    check.equal(again.forward(x), model.forward(x), "forward of the loaded model")


def test_a_file_written_on_the_host_loads_and_saves_to_the_same_bytes():
    want = check.fixture("host")
    model = load(check.path("host.bin"))
    same(model.config(), want["config"], "config")
    check.close(model.forward(want["x"]), want["y"], atol=want["atol"],
                what="forward of the host's model")
    path = scratch("again.bin")
    save(model, path)
    same_bytes(path, check.path("host.bin"), "the device's save of the host's file")


def test_integer_arrays_for_quantized_models():
    from ulab import numpy as np

    w = array.array("b", [127, -128, 0, 5, -7, 1])
    arrays = [("w", w, "b", (2, 3)), ("acc", array.array("i", [2**31 - 1, -2**31]), "i", (2,)),
              ("u", bytearray(b"\x00\xff"), "B", (1, 2)), ("f", np.array([[1.5, -2.0]]))]
    path = scratch("int8.bin")
    write_file(path, "int8-test", {"scale": 0.25}, arrays)
    same_bytes(path, check.path("int8.bin"), "the device's int8 file")
    kind, meta, got = read_file(check.path("int8.bin"))  # the host's file
    same([kind, meta], ["int8-test", {"scale": 0.25}], "kind and meta")
    same([[name, list(shape), value.tolist() if hasattr(value, "shape") else list(value)]
          for name, shape, value in got],
         [["w", [2, 3], [127, -128, 0, 5, -7, 1]], ["acc", [2], [2**31 - 1, -2**31]],
          ["u", [1, 2], [0, 255]], ["f", [1, 2], [[1.5, -2.0]]]], "arrays read")
    wrong = scratch("int8.bin2")
    has(check.raises(ValueError, write_file, wrong, "x", {}, [("w", w, "b", (4, 3))]), "shape")
    same([exists(wrong), exists(wrong + ".tmp")], [False, False],
         "files left by a refused write")


# ---- bad files -----------------------------------------------------------------------------
def test_truncated_files_are_rejected():
    for cut, part in check.fixture("cuts")["cuts"]:
        has(load_error("cut%d" % cut), part)


def test_a_file_cut_inside_its_meta_block_is_called_truncated():
    """Not 'the meta block is not valid JSON': the JSON was never read whole."""
    for cut in check.fixture("cuts")["in_meta"]:
        has(load_error("cut%d" % cut), "is truncated")


def test_foreign_corrupt_and_wrong_version_files_are_rejected():
    has(load_error("foreign"), "not a tinyattn model file")
    has(load_error("v2"), "format version 2", "version 1")
    has(load_error("flipped"), "checksum")
    has(load_error("longer"), "2 unexpected bytes")


def test_arrays_that_do_not_fit_the_config_are_rejected():
    has(load_error("shape.bin"), "0.W", "(32, 5)", "(32, 4)")
    has(load_error("missing.bin"), "5.b")
    has(load_error("kind.bin"), "'int8-sequential'")


def test_absurd_shapes_in_a_good_file_are_refused_before_anything_is_allocated():
    """A small file with a valid CRC: a config asking for 10^7 x 10^7 weights, and an array
    of 0 x 10^9 (no bytes, a billion rows). Both refused at once, naming what is wrong (in the
    module's 256 KB heap on the unix port)."""
    has(load_error("huge.bin"),
        "array 0.W must be float32 of shape (10000000, 10000000), got (1, 1)")
    has(load_error("empty.bin"),
        "array 0.W has shape (0, 1000000000); every dimension must be >= 1")
    has(load_error("entry.bin"),
        "config entry 0: ['Dense', 1]: must be ['Dense', in_features, out_features, use_bias]")


def test_an_int8_file_with_an_array_no_layer_reads_is_refused():
    """int8.load builds each layer reading its arrays from the file: one left unread is
    named; a name given twice is refused when the file is indexed."""
    from tinyattn.int8 import load as load_int8

    path = scratch("extra-int8.bin")
    tokens = {"kind": "Tokens", "seq_len": 2, "s_x": 0.1}
    write_file(path, "quantized", {"layers": [tokens]},
               [("0.W", bytearray(4), "b", (2, 2))])
    has(check.raises(ValueError, load_int8, path), "arrays ['0.W'] are not part of the int8")
    path = scratch("twice.bin")
    write_file(path, "quantized", {"layers": [tokens]},
               [("a", bytearray(4), "b", (4,)), ("a", bytearray(4), "b", (4,))])
    has(check.raises(ValueError, load_int8, path), "array a appears twice")


# ---- the heap ------------------------------------------------------------------------------
def test_a_save_and_load_leave_the_heap_as_they_found_it():
    path = scratch("heap.bin")
    host = check.path("host.bin")
    check.heap_returns(lambda: save(load(host), path), what="save(load(...))")
    check.heap_returns(lambda: load_error("flipped"), what="a refused load")
