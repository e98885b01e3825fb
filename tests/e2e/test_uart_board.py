"""The virtual board in UART mode: a 260-byte unread window on stdin, as a board's UART
ring; and the whole `make run` through it."""

import subprocess
import sys

import pytest
import serial

from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.process_state import bytes_read
from tinyattn_host.virtual.uart_board import RING, UartVirtualBoard
from tinyattn_host.virtual.unixport_process import has_raw_repl

from repl_line import DEADLINE, friendly, read_until, wait_for_handler, wait_until

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


@pytest.fixture
def uart_board(start_virtual_board):
    return start_virtual_board(UartVirtualBoard)


def test_bytes_beyond_the_unread_window_are_dropped(uart_board):
    piece = (1000 - RING) // 10
    with serial.Serial(uart_board.port, timeout=0.1) as port:
        friendly(port)
        # one line: the program waits for a file "go" without reading stdin, then reads 1000
        port.write(b"import os, sys, time; exec(\"while 'go' not in os.listdir():"
                   b" time.sleep_ms(5)\"); s = sys.stdin.buffer.read(1000)\r")
        wait_for_handler(uart_board)
        wait_until(lambda: uart_board.held() == 0)  # the REPL took the whole line
        port.write(b"a" * 1000)  # nothing reads stdin: only what fits the ring arrives
        wait_until(lambda: uart_board.dropped == 1000 - RING)
        (uart_board.flash_dir / "go").touch()
        wait_until(lambda: uart_board.held() == 0)  # read() took what the ring held
        before = bytes_read(uart_board.pid)
        for sent in range(piece, 10 * piece + 1, piece):  # each piece once read() took the last
            port.write(b"b" * piece)
            wait_until(lambda: bytes_read(uart_board.pid) >= before + sent)
        read_until(port, b">>> ")
        port.write(b"print('kept', s.count(b'a'), len(s))\r")
        seen = read_until(port, b"kept %d 1000" % RING)
        assert b"kept %d 1000" % RING in seen, seen[-400:]
    assert uart_board.dropped == 1000 - RING


def test_make_run_through_the_uart_window(uart_board):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "run", "--port", uart_board.port,
                           "--batch-size", "40"], capture_output=True, text=True, timeout=10 * DEADLINE)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "PASS:" in done.stdout and "int8 bit-exact 300/300" in done.stdout
