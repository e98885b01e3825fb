"""The board's own quantize(model, rows).save(path) against the host's quantizer
(tinyattn_host.quantize): for each float model file and its calibration rows (and padding
mask), the int8 file the board writes is the host's byte for byte. Then the sensor model's
int8 file (the host's) runs on the board bit for bit with the integer reference."""

import array

import check
from tinyattn import load as load_float
from tinyattn.int8 import load, quantize
from tinyattn.int8.numbers import quantize_tensor


def _float32_port():
    """A board's floats are float32; quantize on a double-precision port computes its
    scales in doubles (the host makes a float32 board's file)."""
    assert 1.0 + 1e-10 == 1.0, "this port's floats are doubles; a board's are float32"


def _first_difference(a, b):
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return i
    return min(len(a), len(b))


def test_the_boards_int8_file_is_the_hosts_byte_for_byte():
    _float32_port()
    for name in check.names("model_"):
        f = check.fixture(name)
        model = load_float(check.path(name + ".bin"))
        qm = quantize(model, f["x"], batch_size=f["batch_size"], mask=f.get("mask"))
        qm.save(check.path(name + "-board.bin"))
        model = qm = None
        with open(check.path(name + "-board.bin"), "rb") as g:
            board = g.read()
        with open(check.path(name + "-int8.bin"), "rb") as g:
            host = g.read()
        if board != host:
            i = _first_difference(board, host)
            raise AssertionError("%s: the board's int8 file (%d bytes) differs from the host's "
                                 "(%d) from byte %d: board %r, host %r" % (
                                     name, len(board), len(host), i, board[max(0, i - 40):i + 40],
                                     host[max(0, i - 40):i + 40]))


def test_the_sensor_int8_model_runs_bit_for_bit():
    _float32_port()
    f = check.fixture("sensor")
    qm = load(check.path("sensor-int8.bin"))
    x = f["x"]
    rows, cols = x.shape
    xq = quantize_tensor(x, qm.in_scale)
    check.equal(xq, f["xq"], "the input quantized on the board")
    y = qm.forward_int(array.array("b", f["xq"]), rows, cols)[0]
    check.equal(y, f["y"], "the int32 logits")
