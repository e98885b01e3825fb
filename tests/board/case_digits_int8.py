"""The digits model trained by the reference, quantized (tests/device/test_digits_int8.py):
the host's int8 model (quantized as the device does, calibrated on the train rows) bit for
bit with the integer reference on every layer of every test row, and within 1 point of the
float model's test accuracy; the device's own quantization (calibrated on the first train
rows) near the host's model of the same rows, and within 1 point of the float accuracy."""

import array
import gc

import check
from int8_check import (accuracy, float_model, host_keeps_the_float_accuracy,
                        host_layers_match, load_int8, read_bytes, within_a_point)

ROWS_OF_HEAP_CHECK = 16


def test_every_layer_matches_the_reference_on_every_test_row():
    host_layers_match()


def test_int8_keeps_the_float_accuracy():
    host_keeps_the_float_accuracy()


def test_forward_int_returns_the_heap():
    qm = load_int8("int8.bin")
    cols = check.fixture("trace")["cols"]
    xq = array.array("b", read_bytes("xq.bin")[:ROWS_OF_HEAP_CHECK * cols])
    check.heap_returns(lambda: qm.forward_int(xq, ROWS_OF_HEAP_CHECK, cols), what="forward_int")


def test_quantized_on_the_device_keeps_the_float_accuracy():
    from tinyattn import predict
    from tinyattn.datasets.digits import load_digits
    from tinyattn.int8 import quantize

    model, f = float_model()
    float_accuracy, rows = f["accuracy"], f["calib_rows"]
    f = None
    train, test = load_digits(check.path("digits.csv"), seed=42)
    calib = train.X[:rows, :].copy()
    train = None
    gc.collect()
    qm = quantize(model, calib)
    calib = None
    check.near_model(qm, load_int8("int8_calib.bin"), "digits calibrated on %d rows" % rows)
    within_a_point(accuracy(predict(qm, test.X), test.y), float_accuracy,
                   "quantized on the device", len(test))
