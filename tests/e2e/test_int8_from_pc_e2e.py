"""Issue 34's path on the virtual board: the sensor model (tests/fixtures/sensor, PyTorch's)
imported and quantized on the PC, then check-model of the int8 file: loaded on the board,
its outputs bit for bit the integer reference's, the heap it holds after loading and after one
sample measured there, and whether it fits a board without PSRAM (not said with the stand-in)."""

from pathlib import Path

import numpy as np
import pytest

from tinyattn_host.__main__ import main
from tinyattn_host.board.board import Board
from tinyattn_host.checks.model_check import check_model
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

SENSOR = Path(__file__).resolve().parents[1] / "fixtures" / "sensor"
ROWS = 4


def test_the_sensor_int8_file_made_on_the_pc_checks_bit_for_bit(start_virtual_board, tmp_path):
    int8_file = tmp_path / "sensor-int8.bin"
    assert main(["import-torch", str(SENSOR / "model.npz"), str(SENSOR / "layers.json"),
                 "-o", str(int8_file), "--int8", str(SENSOR / "calib1000.npy")]) == 0
    X = np.load(SENSOR / "inputs.npy")[:ROWS]
    real_ulab = unixport.has_ulab(unixport.interpreter())
    board = start_virtual_board(heap="8m" if real_ulab else None)
    lines = []
    with Board(port=board.port, out=lambda *a: None) as connected:
        ok, worst = check_model(connected.start_link(), int8_file, X, out=lines.append,
                                expect=np.load(SENSOR / "out.npy")[:ROWS])
    text = "\n".join(lines)
    assert ok, text
    assert lines[-1].startswith("PASS") and "bit for bit as the integer reference" in lines[-1]
    assert 0 < worst < 0.05, text  # int8 precision against torch
    heap = next(line for line in lines if line.startswith("heap: "))
    loaded, ran = [int(w) for w in heap.split() if w.isdigit()][:2]
    assert 0 < loaded <= ran, heap
    if real_ulab:
        assert ("fits a board without PSRAM (~300 KB free): it holds %d KB" % ran) in text or \
            ("does not fit a board without PSRAM (~300 KB free): it holds %d KB" % ran) in text
    else:
        assert "not measured (the stand-in)" in text and "fits" not in text


def test_check_model_on_a_virtual_board_finds_the_smallest_heap(tmp_path, capsys):
    """The command on a virtual board with a real ulab also finds the smallest -X heapsize=
    that loads the file and runs one sample, and says from it whether it fits 300 KB."""
    if not unixport.has_ulab(unixport.interpreter()):
        pytest.skip("heap figures need a real ulab (MICROPYTHON=...); the stand-in's mean nothing")
    int8_file = tmp_path / "sensor-int8.bin"
    assert main(["import-torch", str(SENSOR / "model.npz"), str(SENSOR / "layers.json"),
                 "-o", str(int8_file), "--int8", str(SENSOR / "calib1000.npy")]) == 0
    np.save(tmp_path / "x.npy", np.load(SENSOR / "inputs.npy")[:ROWS])
    capsys.readouterr()
    assert main(["check-model", str(int8_file), str(tmp_path / "x.npy"), "--port", "virtual",
                 "--heap", "8m"]) == 0
    out = capsys.readouterr().out.splitlines()
    line = next(i for i, text in enumerate(out) if text.startswith("heap to load it from a file"))
    kilobytes = int(out[line].split(": ")[1].split()[0])
    assert 16 < kilobytes < 8192, out[line]
    verdict = "fits" if kilobytes <= 300 else "does not fit"
    assert out[-1] == "%s a board without PSRAM (~300 KB free)" % verdict
    assert sum("a board without PSRAM" in text for text in out) == 1  # one verdict, this one
