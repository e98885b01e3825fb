"""process_state.hung_in_a_lock, on real processes: a lone thread waiting for a lock it holds
itself waits for ever (what a unix port whose SIGINT handler jumps out of its heap's lock
does, tests/e2e/test_ctrl_c.py); a timed wait, a sleep, a running loop do not."""

import subprocess
import sys
import time

import pytest

from tinyattn_host.virtual import process_state
from tinyattn_host.virtual.process_state import hung_in_a_lock

SETUP = "import threading, time; lock = threading.Lock(); lock.acquire(); print('ready', flush=True)\n"


def in_futex(pid):
    """Whether process `pid` is blocked in a futex call (a lock's wait)."""
    number = open("/proc/%d/syscall" % pid).read().split()[0]
    return number.isdigit() and int(number) in process_state._FUTEX[process_state._machine(pid)]


def waits_in(pid, condition):
    """Wait for the event `condition(pid)` (a deadline only bounds a failure)."""
    deadline = time.monotonic() + 60
    while not condition(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert condition(pid)


@pytest.mark.parametrize("code,blocked,hung", [
    ("lock.acquire()", in_futex, True),
    ("lock.acquire(timeout=60)", in_futex, False),
    ("time.sleep(60)", lambda pid: process_state.waits_for_input(pid) is None
     and open("/proc/%d/syscall" % pid).read().split()[0].isdigit(), False),
    ("while True: pass", lambda pid: True, False)])
def test_only_an_untimed_wait_of_a_lone_thread_is_a_hang(code, blocked, hung):
    proc = subprocess.Popen([sys.executable, "-c", SETUP + code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"ready\n"
        waits_in(proc.pid, blocked)
        assert hung_in_a_lock(proc.pid) is hung
    finally:
        proc.kill()
        proc.wait()


def test_a_process_that_is_gone_is_not_hung():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert hung_in_a_lock(proc.pid) is False
