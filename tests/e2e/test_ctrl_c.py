"""Ctrl-C on the virtual board, as on a board: running code stops with KeyboardInterrupt (a
loop, the demo, a looping main.py that mpremote must get past, MicroPython behind a wrapper
command), and a program that turned Ctrl-C off (the link, kbd_intr(-1)) gets the byte as
data. An interpreter that hangs in a lock after the Ctrl-C is reset, with one line saying so."""

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import serial

from tinyattn_host import protocol as P
from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.virtual.unixport_process import has_raw_repl
from tinyattn_host.virtual.pty_pump import HUNG_AFTER_CTRL_C
from tinyattn_host.virtual.virtual_board import SOFT_REBOOT, VirtualBoard

from repl_line import (answer_to_ctrl_c, ctrl_c_may_hang, friendly, read_until,
                       wait_for_handler, wait_until)

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

DEVICE_PACKAGE = Path(__file__).resolve().parents[2] / "device" / "tinyattn"


# A command that runs the interpreter as its child and catches SIGINT itself (its own
# SigCgt says nothing about MicroPython's). Its child starts with SIGINT ignored, as the
# virtual board starts its interpreters.
WRAPPER = """#!{python}
import signal, subprocess, sys
signal.signal(signal.SIGINT, lambda *_: None)
sys.exit(subprocess.call([{real!r}, *sys.argv[1:]],
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)))
"""


def interrupt_a_loop(board):
    """Start a loop at the friendly REPL, Ctrl-C it; the REPL goes on with its variables."""
    pid = board.pid
    with serial.Serial(board.port, timeout=0.05) as line:
        friendly(line)
        line.write(b"n = 0\rwhile True: n += 1\r\r")  # typed ahead, as a board takes it
        wait_for_handler(board)  # the loop runs
        line.write(b"\x03")
        answer = answer_to_ctrl_c(line)  # the loop never takes the heap's lock
        assert answer.endswith(b"KeyboardInterrupt: \r\n>>> "), answer
        line.write(b"print(n > 0)\r")
        assert b"True\r\n>>> " in read_until(line, b"True\r\n>>> ")
    assert board.pid == pid  # interrupted, not rebooted


def test_ctrl_c_stops_a_loop_and_the_repl_goes_on(virtual_board):
    interrupt_a_loop(virtual_board)


def test_ctrl_c_reaches_micropython_behind_a_wrapper(start_virtual_board, tmp_path):
    wrapper = tmp_path / "micropython-wrapper"
    wrapper.write_text(WRAPPER.format(python=sys.executable, real=unixport.interpreter()))
    wrapper.chmod(0o755)
    board = start_virtual_board(interpreter=str(wrapper))

    def command():
        return Path("/proc/%d/cmdline" % board.pid).read_bytes().split(b"\0")

    wait_until(lambda: str(wrapper).encode() not in command())  # once the wrapper started it
    assert unixport.interpreter().encode() in command()  # the process that runs MicroPython
    interrupt_a_loop(board)


def test_ctrl_c_stops_the_demo(virtual_board):
    shutil.copytree(DEVICE_PACKAGE, virtual_board.flash_dir / "lib" / "tinyattn")
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        friendly(line)
        line.write(b"import tinyattn\rtinyattn.demo()\r")
        started = read_until(line, b"epoch   1/100")
        assert b"epoch   1/100" in started, started
        line.write(b"\x03")
        answer = answer_to_ctrl_c(line)
        if HUNG_AFTER_CTRL_C in answer:  # the Ctrl-C landed in the heap's lock: a reset
            assert ctrl_c_may_hang(virtual_board.interpreter), answer
            assert SOFT_REBOOT in answer and answer.endswith(b">>> "), answer
        else:
            assert answer.endswith(b"KeyboardInterrupt: \r\n>>> "), answer
        assert b"epoch 100/100" not in answer
        line.write(b"print(6 * 7)\r")
        assert b"42\r\n>>> " in read_until(line, b"42\r\n>>> ")


# Waits for ever after the Ctrl-C, in an untimed lock wait of its only thread, as a unix port
# without a GIL can in its heap's lock, on any port.
HANGS_AFTER_CTRL_C = """import _thread
lock = _thread.allocate_lock()
try:
    while True:
        pass
except KeyboardInterrupt:
    lock.acquire()
    lock.acquire()
"""


def test_an_interpreter_hung_after_ctrl_c_is_reset(virtual_board):
    (virtual_board.flash_dir / "lib" / "hangs.py").write_text(HANGS_AFTER_CTRL_C)
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        friendly(line)
        pid, boots = virtual_board.pid, virtual_board.boots
        line.write(b"import hangs\r")
        wait_for_handler(virtual_board)  # the loop runs
        line.write(b"\x03")
        answer = answer_to_ctrl_c(line)
        assert HUNG_AFTER_CTRL_C + SOFT_REBOOT in answer and answer.endswith(b">>> "), answer
        assert (virtual_board.boots, virtual_board.pid != pid) == (boots + 1, True)
        line.write(b"print(6 * 7)\r")  # the board serves again
        assert b"42\r\n>>> " in read_until(line, b"42\r\n>>> ")


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
