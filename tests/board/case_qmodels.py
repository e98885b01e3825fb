"""Whole int8 models with encoder layers: a digits-shaped model (Tokens, Dense, positional, two
encoder layers, pool, Dense) in two forms, and LayerNorm and Gelu as layers of their own.

The host's int8 model (a file quant.load reads) against the integer reference: every layer's
output bit for bit, the classes, save and load. The device's own quantization of the same
float model: its layers, near the float reference, the classes mostly the float model's."""

import array

import check
from tinyattn import Sequential, predict
from tinyattn.int8 import load, quantize
from tinyattn.int8.numbers import quantize_tensor


def float_model(f):
    model = Sequential.from_config(f["config"], seed=3)
    for name, param, grad in model.collect_params():
        param[:] = f[name]
    return model


def classes(y):
    """The predicted class of every row of logits y (as predict() takes it)."""
    out = []
    for row in y.tolist():
        out.append(row.index(max(row)))
    return out




def check_host_model(name):
    """The host's int8 model: each layer's output, the input quantization, the classes, the
    model saved and loaded again; forward_int leaves the heap as it found it."""
    f = check.fixture(name)
    x = f["x"]
    rows, cols = x.shape
    qm = load(check.path(name + ".bin"))
    check.equal([layer.kind for layer in qm.layers], f["kinds"], name + " kinds")
    xq = array.array("b", f["xq"])
    trace = []
    qm.forward_int(xq, rows, cols, trace=trace)
    want = f["trace"]
    check.equal(len(trace), len(want), name + " layers traced")
    for i in range(len(want)):
        check.equal(trace[i][0], want[i], "%s layer %d (%s)" % (name, i, f["kinds"][i]))
    check.equal(quantize_tensor(x, qm.in_scale), f["xq"], name + " input quantized")
    check.equal(predict(qm, x), f["classes"], name + " classes")
    check.heap_returns(lambda: qm.forward_int(xq, rows, cols), what=name + " forward_int")
    qm.save(check.path("saved.bin"))  # a scratch file
    again = load(check.path("saved.bin"))
    check.equal(again.forward_int(xq, rows, cols)[0], want[-1], name + " saved and loaded")


def check_device_quantized(name, rtol_int8, agree=None):
    """The device's quantize of the float model: its kinds, its arrays those of the host's
    model within 1, the float model near the
    reference (1e-4 of max |y|), the int8 one within rtol_int8 of max |y|; saved and loaded it
    computes the same integers."""
    f = check.fixture(name)
    x, y_ref = f["x"], f["y_ref"]
    rows, cols = x.shape
    model = float_model(f)
    qm = quantize(model, x)
    check.equal([layer.kind for layer in qm.layers], f["kinds"], name + " kinds")
    check.near_model(qm, load(check.path(name + ".bin")), name)
    y_float = model.forward(x)
    check.close(y_float, y_ref, rtol=1e-4, what=name + " float model")
    check.close(qm.forward(x), y_ref, rtol=rtol_int8, what=name + " int8 model")
    if agree is not None:
        same = sum(1 for a, b in zip(predict(qm, x), classes(y_float)) if a == b)
        assert same >= agree, "%s: int8 and float classes agree on %d rows" % (name, same)
    xq = quantize_tensor(x, qm.in_scale)
    y = array.array("i", qm.forward_int(xq, rows, cols)[0])  # a copy: int32 logits
    qm.save(check.path("saved.bin"))
    check.equal(load(check.path("saved.bin")).forward_int(xq, rows, cols)[0], y,
                name + " saved and loaded")
    check.heap_returns(lambda: qm.forward(x), what=name + " int8 forward")


def test_digits_shaped_models_match_reference_on_every_row():
    for name in check.names("digits"):
        check_host_model(name)


def test_digits_shaped_models_quantized_on_the_device():
    for name in check.names("digits"):
        check_device_quantized(name, 0.1, agree=20)


def test_standalone_layernorm_and_gelu_match_reference():
    check_host_model("standalone")


def test_standalone_layernorm_and_gelu_quantized_on_the_device():
    check_device_quantized("standalone", 0.05)
