"""An int8 model with encoder layers loads in a fresh interpreter: importing quant does not
import qencoder (its layers take ~17 KB of a board's heap), load registers them on first use.

The runner gives every case module a fresh interpreter (a process on the unix port, a soft
reset on a board), so nothing before this module has imported qencoder."""

import array
import sys

import check
from tinyattn import Sequential
from tinyattn.int8.convert import quantize
from tinyattn.int8.model_load import load
from tinyattn.rng import Rng

IMPORTED = (Sequential, quantize, Rng)  # what a program that quantizes a model imports


def test_int8_encoder_model_loads_in_a_fresh_interpreter():
    assert "tinyattn.int8.encoder" not in sys.modules, "importing the int8 model and quantizer imported int8.encoder"
    f = check.fixture("model")
    qm = load(check.path("enc-int8.bin"))
    check.equal([layer.kind for layer in qm.layers], f["kinds"], "kinds")
    rows, cols = f["x"].shape
    xq = array.array("b", f["xq"])
    trace = []
    qm.forward_int(xq, rows, cols, trace=trace)
    for i, want in enumerate(f["trace"]):
        check.equal(trace[i][0], want, "layer %d (%s)" % (i, f["kinds"][i]))
    check.equal(qm.forward_int(xq, rows, cols)[0], f["trace"][-1], "a second run")


ONE_TIME = ("tinyattn.int8.model_load", "tinyattn.int8.model_save", "tinyattn.let_go",
            "tinyattn.int8.spec", "tinyattn.stored_arrays", "tinyattn.store",
            "tinyattn.canonical_json", "tinyattn.int8.classes", "tinyattn.int8.fields",
            "tinyattn.int8.layers_schema", "tinyattn.int8.norm_schema",
            "tinyattn.int8.attention_schema", "tinyattn.int8.encoder_schema",
            "tinyattn.link.wire", "tinyattn.nn.arguments")


def test_load_and_save_let_go_of_their_code():
    """A loaded or saved model holds none of the file's code (int8/model_load.py,
    model_save.py, let_go.py): each is imported again by the next load or save, which works."""
    before = set(sys.modules)
    f = check.fixture("model")
    rows, cols = f["x"].shape
    xq = array.array("b", f["xq"])
    path = check.path("enc-int8.bin")
    for again in ("again-1.bin", "again-2.bin"):  # the second load imports model_load again
        qm = load(path)
        held = [name for name in ONE_TIME if name in sys.modules and name not in before]
        check.equal(held, [], "modules held after a load: %s" % held)
        check.equal(qm.forward_int(xq, rows, cols)[0], f["trace"][-1], "output")
        path = check.path(again)
        qm.save(path)
        held = [name for name in ONE_TIME if name in sys.modules and name not in before]
        check.equal(held, [], "modules held after a save: %s" % held)


def test_arrays_read_in_order_are_the_indexed_ones():
    """StoredArrays.read_in_order (int8.load's build): with the index let go, each array,
    found by walking the headers from the one after the last read (else from the first), is
    the array the index reads; a name the file lacks is a KeyError."""
    from tinyattn.stored_arrays import open_file

    path = check.path("enc-int8.bin")
    with open_file(path) as stored:
        names = [name for name, _, _ in stored.entries()]
        want = dict((name, bytes(stored.read(name))) for name in names)
    with open_file(path) as stored:
        stored.read_in_order()
        for name in names[1::2] + names[::-2]:  # ahead, then behind: each walk wraps
            check.equal(bytes(stored.read(name)), want[name], name)
        check.raises(KeyError, stored.read, "9.no_such_array")


def test_logits_needs_a_language_model():
    qm = load(check.path("enc-int8.bin"))
    text = check.raises(ValueError, qm.logits, [1, 2])
    check.equal(text, "logits needs an int8 language model (Embedding first)", "message")
