"""The digits model (tinyattn_host.digits: Dense 8 -> E, positional, two encoder layers, pool,
Dense E -> 10 on data/digits.csv) trained by the reference, then quantized on the device:
within 1 point of the float model's test accuracy (as the reference computes it) and bit for
bit with the integer reference on every layer of every test row."""

import numpy as np
import pytest

from device_runner import run_device
from test_qencoder import QUANTIZE_AND_TRACE, encoder_reference_layers
from tinyattn_host.reference import integer_encoder as qref

digits = pytest.importorskip("tinyattn_host.digits")


def test_digits_int8_keeps_the_float_accuracy_and_matches_reference_on_every_test_row():
    params, float_acc, _ = digits.train_host()
    X_train, _, X_test, y_test = digits.split(*digits.load_digits())
    inputs = dict(params, config=digits.DIGITS_CONFIG, calib=X_train, x=X_test)
    out = run_device(QUANTIZE_AND_TRACE, inputs, heap="256m")
    int8_acc = np.mean(np.array(out["int8"]) == y_test)
    print("digits test accuracy: float %.4f, int8 %.4f (%d rows)"
          % (float_acc, int8_acc, len(y_test)))
    assert float_acc >= 0.96
    assert abs(int8_acc - float_acc) <= 0.01
    layers = encoder_reference_layers(out["layers"])
    outputs = qref.sequential(np.array(out["xq"]).reshape(X_test.shape), layers)
    for i, (got, want) in enumerate(zip(out["trace"], outputs)):
        np.testing.assert_array_equal(np.array(got), want.ravel(), err_msg="layer %d" % i)
    assert out["int8"] == np.argmax(outputs[-1], axis=1).tolist()
