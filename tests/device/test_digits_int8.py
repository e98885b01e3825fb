"""The digits model (tinyattn_host.digits: Dense 8 -> E, positional, two encoder layers, pool,
Dense E -> 10 on data/digits.csv) trained by the reference, then quantized: the device's own
quantization within 1 point of the float model's test accuracy (as the reference computes
it), and the int8 model bit for bit with the integer reference on every layer of every test
row (tests/board/case_digits_int8.py on the board).

The bit-for-bit part runs the int8 model the host quantized as the device does, calibrated on
the train rows (tinyattn_host.quantize): the device's own quantize works in its float, float32 on
a board, and may round a scale or weight differently from the unix port. The device's own
quantization calibrates on CALIB_ROWS train rows (what a board's heap holds) and is held to
the host's model of the same rows (check.near_model)."""

from functools import lru_cache

import numpy as np
import pytest

from tinyattn_host import quantize as hq
from tinyattn_host.reference.sequential import int8_layers
import int8_board_files as boardfiles
from board_cases import board_test
from checks import f32
from tinyattn_host.reference.sequential import int8_forward

digits = pytest.importorskip("tinyattn_host.digits")
CALIB_ROWS = 128  # the device's own quantize calibrates on the first train rows: all 1438
# at once take over 32 MB of heap even with a real ulab (8 MB, a PSRAM board's, hold 128)


@lru_cache(maxsize=None)
def host_model():
    """(params as the device holds them (float32), float test accuracy) of the digits model
    the reference trains."""
    params, float_acc, _ = digits.train_host()
    return {k: f32(v) for k, v in params.items()}, float_acc


def test_float_model_reaches_96_percent():
    assert host_model()[1] >= 0.96


def int8_model(params, calib):
    """(specs, arrays) of the digits model quantized with calibration rows calib."""
    return hq.quantize(digits.DIGITS_CONFIG, params, calib)


def make_fixtures():
    params, float_acc = host_model()
    X_train, _, X_test, y_test = digits.split(*digits.load_digits())
    specs, arrays = int8_model(params, X_train)
    xq = hq.quantize_tensor(X_test, hq.in_scale(specs))
    outputs = int8_forward(xq.astype(np.int64), int8_layers(specs, arrays))
    fixtures = {"digits.csv": digits.DIGITS_CSV.read_bytes(), "xq.bin": xq.tobytes(),
                "int8.bin": hq.model_bytes(specs, arrays),
                "int8_calib.bin": hq.model_bytes(*int8_model(params, X_train[:CALIB_ROWS])),
                "float_model": dict(params, config=digits.DIGITS_CONFIG, accuracy=float_acc,
                                    calib_rows=CALIB_ROWS)}
    files, layers = boardfiles.layer_files(specs, outputs)
    fixtures.update(files)
    fixtures["trace"] = {"rows": X_test.shape[0], "cols": X_test.shape[1], "layers": layers,
                         "classes": np.argmax(outputs[-1], axis=1).tolist(),
                         "y": y_test.tolist(), "float_accuracy": float_acc}
    return fixtures


test_digits_int8_on_board = board_test("case_digits_int8", make_fixtures)
