"""A board's REPL over a serial line, for the e2e tests: every wait is for something the board
prints (or does), bounded by a deadline generous enough for a loaded machine, which only
bounds a failure."""

import itertools
import time

from tinyattn_host.virtual.process_state import catches_sigint, hung_in_a_lock

DEADLINE = 120  # seconds: no wait here ends by a timer when things go right
_tokens = itertools.count(1000)


def read_until(line, ending, timeout=DEADLINE, after=b"", stop=None):
    """Bytes from the open port `line` until `ending` shows up (after `after`, when given),
    or until `stop()` is true (an event that means it never will); what came by then, or by
    the deadline."""
    data = b""
    deadline = time.monotonic() + timeout
    while ending not in (data.partition(after)[2] if after else data) \
            and time.monotonic() < deadline and not (stop and stop()):
        data += line.read(line.in_waiting or 1)
    return data


def friendly(line):
    """Bring the board to its friendly REPL with nothing left to read: Ctrl-B, then a line
    whose answer nothing else prints, read to the prompt after it (what a program that had
    the port before, such as mpremote leaving, made the board print comes before it)."""
    token = next(_tokens)
    line.write(b"\r\x02print('synced', %d * 7)\r" % token)
    answer = b"synced %d\r\n>>> " % (token * 7)
    seen = read_until(line, answer)
    assert answer in seen, seen[-400:]


HUNG = ("the interpreter hung in a lock after the Ctrl-C's SIGINT: this unix port raises "
        "KeyboardInterrupt inside its signal handler (threads without a GIL: "
        "sys.implementation._thread is 'unsafe'), out of code that held its heap's lock; a "
        "board raises it between bytecodes. Build it with MICROPY_PY_THREAD_GIL=1 "
        "(docs/testing.md)")


def answer_after_ctrl_c(line, board, ending, after=b""):
    """read_until(line, ending, after=after), failing at once, with HUNG, when the board's
    interpreter hangs for ever in a lock instead."""
    data = read_until(line, ending, after=after, stop=lambda: hung_in_a_lock(board.pid))
    assert not hung_in_a_lock(board.pid), "%s; it printed %r" % (HUNG, data[-300:])
    return data


def wait_until(condition, timeout=DEADLINE, step=0.02):
    """Wait until `condition()` is true (an event: what a process does); assert it is."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(step)
    assert condition()


def wait_for_handler(board, installed=True):
    """Wait until the board's MicroPython runs code (its SIGINT handler is installed), or
    until it does not."""
    wait_until(lambda: catches_sigint(board.pid) == installed)
