"""A virtual board whose interpreter is stopped and continued (SIGSTOP/SIGCONT, as a debugger
or a suspended laptop does) goes on answering: the interpreter's wait then shows in /proc as
restart_syscall, which process_state.waits_for_input counts as a wait (issue 39: HELLO was
never delivered, 'no answer within 60.0 s' with 0 bytes dropped)."""

import os
import signal
import subprocess
import time

import pytest

from tinyattn_host import protocol as P
from tinyattn_host.board.board import Board
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.process_state import STREAM, waits_for_input
from tinyattn_host.virtual.unixport_process import has_raw_repl

from repl_line import wait_until

POLL = "import select, sys\np = select.poll()\np.register(sys.stdin)\np.poll(60000)\n"


def quiet(*args):
    pass


def _state(pid):
    with open("/proc/%d/stat" % pid) as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


def _stop_and_continue(pid):
    os.kill(pid, signal.SIGSTOP)
    wait_until(lambda: _state(pid) == "T")
    os.kill(pid, signal.SIGCONT)
    wait_until(lambda: _state(pid) != "T")


def test_a_poll_stopped_and_continued_is_still_a_wait_for_input():
    """/proc/PID/syscall of a poll that was stopped and continued: restart_syscall."""
    process = subprocess.Popen([unixport.interpreter(), "-c", POLL], stdin=subprocess.PIPE)
    try:
        wait_until(lambda: waits_for_input(process.pid) == STREAM)
        _stop_and_continue(process.pid)
        time.sleep(0.2)
        assert waits_for_input(process.pid) == STREAM, open(
            "/proc/%d/syscall" % process.pid).read()
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(not has_raw_repl(unixport.interpreter()),
                    reason="the interpreter's REPL has no raw mode: no mpremote")
def test_the_board_answers_after_its_interpreter_is_stopped_and_continued(virtual_board):
    with Board(port=virtual_board.port, out=quiet) as board:
        link = board.start_link()
        assert link.hello()["tinyattn"] == "0.1.0"
        pid = virtual_board.pid
        wait_until(lambda: waits_for_input(pid) == STREAM)
        _stop_and_continue(pid)
        head, _ = link.request(P.HELLO, timeout=20)
        assert head["tinyattn"] == "0.1.0"
        assert virtual_board.pid == pid  # the same interpreter, not a reboot
