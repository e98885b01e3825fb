"""The Japanese vowels model (tinyattn_host.vowels: Dense 12 -> E, positional, one encoder
layer, masked pool, Dense E -> 9 on data/japanese_vowels) trained by the reference: at least
97% test accuracy; quantized with its padding masks, the int8 model bit for bit with the
integer reference on every layer of every (padded) test row and within 1 point of the float
accuracy; the device's own quantization (its own .ts loading and standardisation, calibrated
on CALIB_ROWS train rows with their masks) near the host's model of the same rows and within
1 point too (tests/board/case_vowels_int8.py on the board)."""

from functools import lru_cache

import numpy as np

from tinyattn_host import quantize as hq
from tinyattn_host.reference.sequential import int8_layers
import int8_board_files as boardfiles
from board_cases import board_test
from checks import f32
from tinyattn_host import vowels
from tinyattn_host.reference.sequential import int8_forward
from tinyattn_host.sequences import padding_mask

CALIB_ROWS = 32  # the device's own quantize runs the float model on these rows at once


@lru_cache(maxsize=None)
def host_model():
    """(params as the device holds them (float32), float test accuracy, the data)."""
    data = vowels.load_vowels()
    params, _, _ = vowels.train_host(data=data)
    params = {k: f32(v) for k, v in params.items()}
    return params, vowels.test_accuracy(params, data), data


def test_float_model_reaches_97_percent():
    assert host_model()[1] >= 0.97


def make_fixtures():
    params, float_acc, data = host_model()
    S = vowels.DEVICE.SEQ_LEN
    (X_train, _, train_lengths), (X_test, y_test, test_lengths) = data["train"], data["test"]
    train_mask, test_mask = padding_mask(train_lengths, S), padding_mask(test_lengths, S)
    specs, arrays = hq.quantize(vowels.VOWELS_CONFIG, params, X_train, train_mask)
    calib = hq.quantize(vowels.VOWELS_CONFIG, params, X_train[:CALIB_ROWS],
                        train_mask[:CALIB_ROWS])
    xq = hq.quantize_tensor(X_test, hq.in_scale(specs))
    outputs = int8_forward(xq.astype(np.int64), int8_layers(specs, arrays), test_mask)
    fixtures = {"xq.bin": xq.tobytes(), "keep.bin": test_mask.astype(np.uint8).tobytes(),
                "int8.bin": hq.model_bytes(specs, arrays),
                "int8_calib.bin": hq.model_bytes(*calib),
                "float_model": dict(params, config=vowels.VOWELS_CONFIG, accuracy=float_acc,
                                    calib_rows=CALIB_ROWS, X_test_head=X_test[:8])}
    for name in (vowels.DEVICE.TRAIN_FILE, vowels.DEVICE.TEST_FILE):
        fixtures[name] = (vowels.VOWELS_DIR / name).read_bytes()
    files, layers = boardfiles.layer_files(specs, outputs)
    fixtures.update(files)
    int8_classes = np.argmax(outputs[-1], axis=1)
    int8_acc = np.mean(int8_classes == y_test)
    print("vowels test accuracy (pytest -s prints it): float %.2f%%, int8 %.2f%% (%d rows)"
          % (100 * float_acc, 100 * int8_acc, len(y_test)))
    assert abs(int8_acc - float_acc) <= 0.01  # the integer reference's own accuracy
    fixtures["trace"] = {"rows": X_test.shape[0], "cols": X_test.shape[1], "layers": layers,
                         "classes": int8_classes.tolist(), "y": y_test.tolist(),
                         "float_accuracy": float_acc}
    return fixtures


test_vowels_int8_on_board = board_test("case_vowels_int8", make_fixtures)
