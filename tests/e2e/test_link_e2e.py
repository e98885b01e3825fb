"""End to end over the virtual board's pty: deploy, handshake, the Iris check, a host
that vanishes, a reset in the middle of a run, and the errors a user can meet."""

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import serial

from tinyattn_host import protocol as P
from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.errors import BoardError
from tinyattn_host.checks.run_check import IRIS_CONFIG, Check
from tinyattn_host.checks.run_report import write_report
from tinyattn_host.virtual.process_state import LINE, waits_for_input
from tinyattn_host.virtual.unixport_process import has_raw_repl

from repl_line import DEADLINE, wait_until

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


def quiet(*args):
    pass


@pytest.fixture
def board(virtual_board):
    with Board(port=virtual_board.port, out=quiet) as connected:
        connected.virtual_board = virtual_board
        yield connected


def test_deploy_and_handshake(board):
    assert board.info["tinyattn"] == "0.1.0"
    assert (board.virtual_board.flash_dir / "lib" / "tinyattn").is_dir()
    hello = board.start_link().hello()
    assert hello["tinyattn"] == "0.1.0" and hello["protocol"] == P.PROTOCOL
    assert hello["ulab"] == ("stand-in" if board.virtual_board.ulab == "stand-in"
                             else hello["ulab"]) and hello["ulab"]
    assert hello["mpy"] & 0xFF == 6 and hello["free"] > 0
    assert hello["micropython"].count(".") == 2
    assert board.link.status()["kbd_intr"] == -1  # the link switched Ctrl-C off


def test_iris_check_passes_and_writes_the_report(board, tmp_path):
    lines = []
    check = Check(board, batch_size=40, out=lines.append, progress=False)
    summary = check.run()
    assert summary.ok, "\n".join(lines)
    assert sum(b.rows for b in summary.batches) == 2 * 150
    assert lines[-1].startswith("train step")
    written = write_report(tmp_path / "report", summary, check.samples)
    data = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert data["ok"] and len(data["batches"]) == 8
    assert {p.name for p in written} >= {"random_relative_error.png", "trained_errors.png",
                                         "trained_attention.png", "trained_training.png"}
    assert all(p.stat().st_size > 1000 for p in written)


def test_host_vanishing_mid_message_then_the_device_returns_to_the_repl(virtual_board):
    with Board(port=virtual_board.port, out=quiet, serve_timeout=1.5) as first:
        link = first.start_link()
        part = P.frames(P.LOAD_MODEL, link.next_seq(), bytes(1000))[0]
        link.send_bytes(part)  # half a message, then the host is gone
        first.transport.serial.close()
        first.transport = None
    # after the silence timeout the device is back at the REPL, which reads a byte at a time
    # (the link waits in a poll)
    wait_until(lambda: waits_for_input(virtual_board.pid) == LINE)
    done = subprocess.run([sys.executable, "-m", "mpremote", "connect", virtual_board.port,
                           "exec", "print(6 * 7)"], capture_output=True, text=True,
                          timeout=DEADLINE)
    assert done.stdout.strip() == "42", done.stdout + done.stderr
    with Board(port=virtual_board.port, out=quiet) as again:
        assert again.start_link().hello()["tinyattn"] == "0.1.0"


def test_a_reset_mid_run_is_reported_and_the_run_goes_on(board):
    lines = []

    def reset_once(model, index):
        if (model, index) == ("trained", 1):
            pid = board.virtual_board.pid
            board.virtual_board.hard_reset()
            wait_until(lambda: board.virtual_board.pid not in (pid, None))

    summary = Check(board, batch_size=50, out=lines.append, progress=False,
                    on_batch=reset_once).run()
    assert summary.resets == 1
    assert any("the device reset" in line and "reconnecting" in line for line in lines)
    assert summary.ok, "\n".join(lines)


def test_clear_errors(virtual_board, tmp_path):
    with pytest.raises(BoardError, match="no such port: /dev/nonexistent"):
        Board(port="/dev/nonexistent", out=quiet).open()
    with serial.Serial(virtual_board.port, exclusive=True):
        with pytest.raises(BoardError, match="port busy"):
            Board(port=virtual_board.port, out=quiet).open()
    with pytest.raises(BoardError, match="has no tinyattn, this is tinyattn 0.1.0: deploy"):
        Board(port=virtual_board.port, deploy="never", out=quiet).open()
    if virtual_board.ulab == "stand-in":
        shutil.rmtree(virtual_board.flash_dir / "lib" / "ulab")
        with pytest.raises(BoardError, match="has no ulab: flash a MicroPython firmware built "
                                             "with ulab"):
            Board(port=virtual_board.port, out=quiet).open()


def test_no_micropython_answering():
    master, slave = os.openpty()  # a terminal with nothing behind it
    try:
        with pytest.raises(BoardError, match="no MicroPython answering"):
            Board(port=os.ttyname(slave), out=quiet).open()
    finally:
        os.close(slave)
        os.close(master)


def test_an_int8_model_sent_back_with_load_qmodel_runs_bit_for_bit(board):
    """QUANTIZE's reply (layers and arrays) is what LOAD_QMODEL takes: the Iris model and the
    digits encoder model, each loaded over another int8 model, answer as the reference."""
    from tinyattn_host.digits import DIGITS_CONFIG, init_params
    from tinyattn_host.checks.int8_io import in_scale, quantize_input
    from tinyattn_host.checks.run_check import iris, random_model
    from tinyattn_host.reference.sequential import int8_forward, int8_layers

    link = board.start_link()
    X_iris = iris()[0][:20]
    X_digits = np.random.default_rng(5).uniform(0, 1, (6, 64)).astype(np.float32)
    for config, params, X in ((IRIS_CONFIG, random_model(3), X_iris),
                              (DIGITS_CONFIG, init_params(DIGITS_CONFIG, 3), X_digits)):
        link.request(P.LOAD_MODEL, {"config": config}, params)
        qhead, qarrays = link.request(P.QUANTIZE, {}, {"x": X})
        xq = quantize_input(X, in_scale(qhead))
        link.request(P.LOAD_MODEL, {"config": IRIS_CONFIG}, random_model(4))
        link.request(P.QUANTIZE, {}, {"x": X_iris})  # another int8 model in its place
        link.request(P.LOAD_QMODEL, {"layers": qhead["layers"]}, qarrays)
        head, got = link.request(P.FORWARD_INT8, {}, {"x": xq})
        layers = int8_layers(qhead["layers"], qarrays)
        want = int8_forward(xq, layers)[-1]
        np.testing.assert_array_equal(got["y"].reshape(head["rows"], head["cols"]), want)
