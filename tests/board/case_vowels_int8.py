"""The vowels model trained by the reference, quantized with its padding masks
(tests/device/test_vowels_int8.py): the host's int8 model bit for bit with the integer
reference on every layer of every test row, within 1 point of the float accuracy; the device's
own .ts loading, standardisation and quantization near the host's and within 1 point."""

import array
import gc

import check
from int8_check import (accuracy, float_model, host_keeps_the_float_accuracy,
                        host_layers_match, load_int8, read_bytes, within_a_point)

ROWS_OF_HEAP_CHECK = 16


def test_every_layer_matches_the_reference_on_every_test_row():
    host_layers_match(masked=True)


def test_int8_keeps_the_float_accuracy():
    host_keeps_the_float_accuracy(masked=True)


def test_masked_forward_int_returns_the_heap():
    qm = load_int8("int8.bin")
    cols = check.fixture("trace")["cols"]
    xq = array.array("b", read_bytes("xq.bin")[:ROWS_OF_HEAP_CHECK * cols])
    keep = bytearray(read_bytes("keep.bin")[:ROWS_OF_HEAP_CHECK * 29])
    check.heap_returns(lambda: qm.forward_int(xq, ROWS_OF_HEAP_CHECK, cols, keep=keep),
                       what="a masked forward_int")


def test_quantized_on_the_device_keeps_the_float_accuracy():
    from tinyattn import padding_mask, predict
    from tinyattn.int8 import quantize
    from tinyattn.datasets.vowels import load_vowels

    model, f = float_model()
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
    check.near_model(qm, load_int8("int8_calib.bin"), "vowels calibrated on %d rows" % rows)
    test_mask = padding_mask(test.lengths, test.seq_len)
    predicted = predict(qm, test.X, 16, test_mask)
    within_a_point(accuracy(predicted, test.y), float_accuracy,
                   "quantized on the device", len(test))
