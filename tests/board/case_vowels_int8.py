"""The vowels model trained by the reference, quantized with its padding masks
(tests/device/test_vowels_int8.py): the host's int8 model bit for bit with the integer
reference on every layer of every test row, within 1 point of the float accuracy; the device's
own .ts loading, standardisation and quantization near the host's and within 1 point."""

import array
import gc

import check
from int8_check import accuracy, int8_classes, layers_match, read_bytes, within_a_point

ROWS_OF_HEAP_CHECK = 16


def load_model(name):
    from tinyattn.int8 import load

    return load(check.path(name))


def run_host_model():
    qm = load_model("int8.bin")
    xq, keep = array.array("b", read_bytes("xq.bin")), bytearray(read_bytes("keep.bin"))
    spec = check.fixture("trace")
    trace = []
    qm.forward_int(xq, spec["rows"], spec["cols"], trace=trace, keep=keep)
    return trace, spec


def test_every_layer_matches_the_reference_on_every_test_row():
    trace, spec = run_host_model()
    layers_match(trace, spec, read_bytes)


def test_int8_keeps_the_float_accuracy():
    trace, spec = run_host_model()
    predicted = int8_classes(*trace[-1])
    within_a_point(accuracy(predicted, spec["y"]), spec["float_accuracy"],
                   "the host's int8 model", spec["rows"])


def test_masked_forward_int_returns_the_heap():
    qm = load_model("int8.bin")
    cols = check.fixture("trace")["cols"]
    xq = array.array("b", read_bytes("xq.bin")[:ROWS_OF_HEAP_CHECK * cols])
    keep = bytearray(read_bytes("keep.bin")[:ROWS_OF_HEAP_CHECK * 29])
    check.heap_returns(lambda: qm.forward_int(xq, ROWS_OF_HEAP_CHECK, cols, keep=keep),
                       what="a masked forward_int")


def test_quantized_on_the_device_keeps_the_float_accuracy():
    from tinyattn import Sequential, padding_mask, predict
    from tinyattn.int8 import quantize
    from tinyattn.datasets.vowels import load_vowels

    f = check.fixture("float_model")
    model = Sequential.from_config(f["config"], seed=3)
    for name, param, _ in model.collect_params():
        param[:] = f[name]
    float_accuracy, rows, head = f["accuracy"], f["calib_rows"], f["X_test_head"]
    f = None
    train, test = load_vowels(check.path("")[:-1])
    check.close(test.X[:8, :], head, rtol=1e-5, atol=1e-5, what="standardised test rows")
    calib = train.X[:rows, :].copy()
    mask = padding_mask(train.lengths[:rows], train.seq_len)
    train = None
    gc.collect()
    qm = quantize(model, calib, mask=mask)
    calib = mask = None
    check.near_model(qm, load_model("int8_calib.bin"), "vowels calibrated on %d rows" % rows)
    test_mask = padding_mask(test.lengths, test.seq_len)
    predicted = predict(qm, test.X, 16, test_mask)
    within_a_point(accuracy(predicted, test.y), float_accuracy,
                   "quantized on the device", len(test))
