"""The virtual board in UART mode: a 260-byte unread window on stdin, as a board's UART
ring; and the whole `make run` through it."""

import subprocess
import sys
import time

import pytest
import serial

from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.uart_board import RING, UartVirtualBoard
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


@pytest.fixture
def uart_board(start_virtual_board):
    return start_virtual_board(UartVirtualBoard)


def read_until(port, marker, timeout=20):
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        seen += port.read(port.in_waiting or 1)
    assert marker in seen, seen[-400:]
    return seen


def test_bytes_beyond_the_unread_window_are_dropped(uart_board):
    with serial.Serial(uart_board.port, timeout=0.1) as port:
        port.write(b"\r\x02")  # the friendly REPL
        read_until(port, b">>> ")
        port.write(b"import sys, time; time.sleep(1); s = sys.stdin.buffer.read(1000)\r")
        read_until(port, b"\n")
        time.sleep(0.3)  # the interpreter sleeps: nothing reads stdin
        port.write(b"a" * 1000)  # only what fits the ring arrives
        time.sleep(1.5)
        for _ in range(10):  # read() is reading now: these arrive
            port.write(b"b" * ((1000 - RING) // 10))
            time.sleep(0.05)
        read_until(port, b">>> ")
        port.write(b"print('kept', s.count(b'a'), len(s))\r")
        read_until(port, b"kept %d 1000" % RING)
    assert uart_board.dropped == 1000 - RING


def test_make_run_through_the_uart_window(uart_board):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "run", "--port", uart_board.port,
                           "--batch-size", "40"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "PASS:" in done.stdout and "int8 bit-exact 300/300" in done.stdout
