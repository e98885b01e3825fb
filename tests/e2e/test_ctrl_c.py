"""Ctrl-C on the virtual board, as on a board: running code stops with KeyboardInterrupt (a
loop, the demo, a looping main.py that mpremote must get past), and a program that turned
Ctrl-C off (the link, kbd_intr(-1)) gets the byte as data."""

import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import serial

from tinyattn_host import protocol as P
from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.virtual.unixport_process import catches_sigint, has_raw_repl
from tinyattn_host.virtual.virtual_board import VirtualBoard

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

DEVICE_PACKAGE = Path(__file__).resolve().parents[2] / "device" / "tinyattn"


def read_until(line, ending, timeout=20, after=b""):
    """Bytes from the port until `ending` shows up (after `after`, when given)."""
    data = b""
    deadline = time.monotonic() + timeout
    while ending not in (data.partition(after)[2] if after else data) \
            and time.monotonic() < deadline:
        data += line.read(line.in_waiting or 1)
    return data


def friendly(line):
    """Get the friendly REPL's prompt on an open port."""
    line.write(b"\r\x02")
    assert b">>> " in read_until(line, b">>> ")
    time.sleep(0.5)
    line.reset_input_buffer()


def wait_for_handler(board, installed=True, timeout=10):
    deadline = time.monotonic() + timeout
    while catches_sigint(board.pid) != installed and time.monotonic() < deadline:
        time.sleep(0.02)
    assert catches_sigint(board.pid) == installed


def test_ctrl_c_stops_a_loop_and_the_repl_goes_on(virtual_board):
    pid = virtual_board.pid
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        friendly(line)
        line.write(b"n = 0\rwhile True: n += 1\r\r")
        wait_for_handler(virtual_board)
        time.sleep(0.2)
        line.write(b"\x03")
        answer = read_until(line, b">>> ", after=b"KeyboardInterrupt")
        assert answer.endswith(b"KeyboardInterrupt: \r\n>>> "), answer
        line.write(b"print(n > 0)\r")
        assert b"True\r\n" in read_until(line, b">>> ")
    assert virtual_board.pid == pid  # interrupted, not rebooted


def test_ctrl_c_stops_the_demo(virtual_board):
    shutil.copytree(DEVICE_PACKAGE, virtual_board.flash_dir / "lib" / "tinyattn")
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        friendly(line)
        line.write(b"import tinyattn\rtinyattn.demo()\r")
        started = read_until(line, b"epoch   1/100", timeout=120)
        assert b"epoch   1/100" in started, started
        line.write(b"\x03")
        answer = read_until(line, b">>> ", after=b"KeyboardInterrupt")
        assert answer.endswith(b"KeyboardInterrupt: \r\n>>> "), answer
        assert b"epoch 100/100" not in answer
        line.write(b"print(6 * 7)\r")
        assert b"42\r\n" in read_until(line, b">>> ")


def test_mpremote_gets_past_a_looping_main_py(tmp_path):
    flash = tmp_path / "flash"
    flash.mkdir()
    (flash / "main.py").write_text("n = 0\nwhile True:\n    n += 1\n")
    with VirtualBoard(flash_dir=flash) as board:
        wait_for_handler(board)  # main.py runs
        done = subprocess.run([sys.executable, "-m", "mpremote", "connect", board.port,
                               "resume", "exec", "print('interrupted main.py', n > 0)"],
                              capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == "interrupted main.py True", done.stdout + done.stderr
        with Board(port=board.port, out=lambda *_: None) as connected:  # as make run does
            assert connected.info["tinyattn"] == "0.1.0"


def test_ctrl_c_bytes_reach_the_link_as_data(virtual_board):
    ctrl_c_float = struct.unpack("<f", b"\x03" * 4)[0]
    x = np.full((16, 4), ctrl_c_float)
    x[:, 1] = np.arange(16)
    params = {k: np.where(np.arange(v.size).reshape(v.shape) % 2, v, ctrl_c_float)
              for k, v in random_model(3).items()}
    request = P.encode({}, {"x": x})
    assert request.count(b"\x03") == 3 * 64
    with Board(port=virtual_board.port, out=lambda *_: None) as board:
        link = board.start_link()
        pid = virtual_board.pid
        wait_for_handler(virtual_board, installed=False)  # serve() called kbd_intr(-1)
        link.request(P.LOAD_MODEL, {"config": IRIS_CONFIG}, params)
        for _ in range(3):
            _, got = link.request(P.FORWARD, {}, {"x": x})
            want, _ = sequential_forward(IRIS_CONFIG, params, x)
            np.testing.assert_allclose(got["logits"], want,
                                       atol=1e-4 * max(1, np.abs(want).max()))
        link.send_bytes(b"\x03" * 50)  # bare Ctrl-C bytes: garbage to the link, no signal
        assert link.status()["kbd_intr"] == -1
        assert virtual_board.pid == pid
