"""`make run` on a board without PSRAM: the virtual board with a 300 KB heap (VIRTUAL_HEAP,
--heap), through the UART window. The board runs the requests in pieces that fit its heap and
says so, and the harness prints it (`heap:` lines); with a real ulab the whole run passes (the
stand-in's Python lists take several times ulab's memory, so there the run is skipped and only
the heap option is checked; 300 KB is a 32-bit board's figure, so a 64-bit port skips the run
too: tests/heap_budget.py).
"""

import os
import subprocess
import sys

import pytest

from heap_budget import board_heap
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.uart_board import UartVirtualBoard
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")
NO_PSRAM = "300k"


def test_virtual_heap_sets_the_virtual_board_heap(start_virtual_board, monkeypatch):
    """The interpreter the board runs is started with that heap (its command line says)."""
    monkeypatch.setenv("VIRTUAL_HEAP", NO_PSRAM)
    board = start_virtual_board()
    command = open("/proc/%d/cmdline" % board.pid, "rb").read().split(b"\0")
    assert board.heap == NO_PSRAM and b"heapsize=" + NO_PSRAM.encode() in command, command


def test_heap_is_refused_for_a_real_port(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "run", "--port", "/dev/null",
                           "--heap", NO_PSRAM], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--heap sizes the virtual board's heap" in done.stderr


@pytest.mark.skipif(not unixport.has_ulab(unixport.interpreter()),
                    reason="the ulab stand-in does not fit a 300 KB heap (MICROPYTHON=... "
                           "with a real ulab runs this)")
def test_make_run_passes_in_300k_through_the_uart_window(start_virtual_board):
    board = start_virtual_board(UartVirtualBoard, heap=board_heap(NO_PSRAM))  # a 32-bit figure
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "run", "--port", board.port],
                          capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, PYTHONUNBUFFERED="1"))
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert "PASS:" in out and "int8 bit-exact 300/300" in out and "classes agree 359/359" in out
    assert "\nheap: " in out and "request size(s) cut to fit the heap" in out  # said, counted
