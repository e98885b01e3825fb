"""A board's REPL over a serial line, for the e2e tests: every wait is for something the board
prints (or does), bounded by a deadline generous enough for a loaded machine, which only
bounds a failure."""

import itertools
import time

from tinyattn_host.virtual.process_state import catches_sigint

DEADLINE = 120  # seconds: no wait here ends by a timer when things go right
_tokens = itertools.count(1000)


def read_until(line, ending, timeout=DEADLINE, after=b""):
    """Bytes from the open port `line` until `ending` shows up (after `after`, when given);
    what came by the deadline if it does not."""
    data = b""
    deadline = time.monotonic() + timeout
    while ending not in (data.partition(after)[2] if after else data) \
            and time.monotonic() < deadline:
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
