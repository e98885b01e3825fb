"""Whole int8 forwards with every kernel call on the emulated chip: the trained Iris model
(all 150 rows), the trained digits model (tinyattn_host.digits, quantized as in
tests/device/test_digits_int8.py; its first DIGITS_ROWS test rows) and two digits-shaped
encoder models (ReLU with the norm after, GELU with norm_first), logits bit for bit with the
unix port's and with the integer reference.

Design: the device's own glue runs in CPython (tinyattn_host.emulator.device_glue): int8.load
reads the model file the host made (tinyattn_host.quantize), QSequential.forward_int plans and
runs the layers, and each viper kernel it calls is the xtensawin machine code in the emulator,
on the buffers the glue made. The unix port runs the same file and input with its own native
code; both answers are compared whole."""

import array
import json

import pytest

from tinyattn_host.emulator.device_glue import device_package
from tinyattn_host.virtual.unixport import run_file

UNIX_FORWARD = """
import array, sys
from tinyattn.int8 import load
rows, cols = int(sys.argv[3]), int(sys.argv[4])
with open(sys.argv[2], "rb") as f:
    xq = array.array("b", f.read())
y = load(sys.argv[1]).forward_int(xq, rows, cols)[0]
print("LOGITS", list(y))
"""


def iris():
    import test_quant

    fixture, model, _, _, _ = test_quant.iris_case()
    return fixture["xq"], 150, 4, model, fixture["trace"][-1]


def digits(act, norm_first):
    import test_qencoder

    fixture, model = test_qencoder.digits_fixture(act, norm_first)
    rows, cols = fixture["x"].shape
    return fixture["xq"], rows, cols, model, fixture["trace"][-1]


DIGITS_ROWS = 64  # of the 359 test rows: each row's buffers travel over gdb every kernel call


def trained_digits():
    from tinyattn_host import quantize as hq
    from tinyattn_host.reference.sequential import int8_layers
    import test_digits_int8
    from tinyattn_host import digits as host_digits
    from tinyattn_host.reference.sequential import int8_forward

    params, _ = test_digits_int8.host_model()
    X_train, _, X_test, _ = host_digits.split(*host_digits.load_digits())
    specs, arrays = test_digits_int8.int8_model(params, X_train)
    xq = hq.quantize_tensor(X_test[:DIGITS_ROWS], hq.in_scale(specs))
    want = int8_forward(xq.astype("int64"), int8_layers(specs, arrays))[-1]
    return (xq.ravel().tolist(), DIGITS_ROWS, X_test.shape[1], hq.model_bytes(specs, arrays),
            want.ravel().tolist())


MODELS = {"iris": iris, "digits_trained": trained_digits,
          "digits_relu_after": lambda: digits("relu", False),
          "digits_gelu_first": lambda: digits("gelu", True)}


def unix_port_logits(tmp_path, model, xq, rows, cols):
    script = tmp_path / "forward.py"
    script.write_text(UNIX_FORWARD)
    (tmp_path / "model.bin").write_bytes(model)
    (tmp_path / "xq.bin").write_bytes(array.array("b", xq).tobytes())
    out = run_file(script, args=(str(tmp_path / "model.bin"), str(tmp_path / "xq.bin"),
                                 str(rows), str(cols)))
    line = [ln for ln in out.splitlines() if ln.startswith("LOGITS ")][-1]
    return json.loads(line[len("LOGITS "):])


def emulated_logits(emulator, path, xq, rows, cols):
    """The device glue's forward_int with its kernels on the emulated chip; the kernels
    called by the second forward (the first also plans)."""
    with device_package(emulator):
        from tinyattn.int8 import load

        qm = load(str(path))
        x = array.array("b", xq)
        first = list(qm.forward_int(x, rows, cols)[0])
        before = len(emulator.calls)
        again = list(qm.forward_int(x, rows, cols)[0])
        return first, again, emulator.calls[before:]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_int8_forward_on_the_emulated_chip_matches_the_unix_port(emulator, tmp_path, name):
    xq, rows, cols, model, want = MODELS[name]()
    (tmp_path / "model.bin").write_bytes(model)
    got, again, calls = emulated_logits(emulator, tmp_path / "model.bin", xq, rows, cols)
    unix = unix_port_logits(tmp_path, model, xq, rows, cols)
    assert len(got) == len(unix) == len(want)
    assert got == unix, "%s: the emulated chip's logits differ from the unix port's" % name
    assert got == [int(v) for v in want], "%s: the logits differ from the integer reference" % name
    assert again == got
    kernels = {c.name for c in calls}
    assert "linear" in kernels and all(c.instructions > 0 for c in calls)
    if name.startswith("digits"):
        assert {"_attend", "norm", "add", "_pool"} <= kernels
