"""A board's REPL over a serial line, for the e2e tests: every wait is for something the board
prints (or does), bounded by a deadline generous enough for a loaded machine, which only
bounds a failure."""

import itertools
import subprocess
import time

from tinyattn_host.virtual.process_state import catches_sigint
from tinyattn_host.virtual.pty_pump import HUNG_AFTER_CTRL_C

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


def answer_to_ctrl_c(line):
    """What the board prints after a Ctrl-C, up to its next prompt: KeyboardInterrupt's, or,
    when the interpreter hung in its heap's lock (a unix port without a GIL, pty_pump), the
    virtual board's one line and its reset."""
    data = b""
    deadline = time.monotonic() + DEADLINE
    while not (data.endswith(b">>> ") and (b"KeyboardInterrupt" in data
                                           or HUNG_AFTER_CTRL_C in data)) \
            and time.monotonic() < deadline:
        data += line.read(line.in_waiting or 1)
    return data


def ctrl_c_may_hang(interpreter):
    """Whether the unix port `interpreter` raises KeyboardInterrupt inside its SIGINT handler
    (threads without a GIL: sys.implementation._thread is 'unsafe'), which can leave it
    waiting for its heap's lock for ever (docs/testing.md); a board raises it between
    bytecodes, as a port with a GIL does."""
    done = subprocess.run([interpreter, "-c", "import sys; print(sys.implementation._thread)"],
                          capture_output=True, text=True, timeout=30)
    return done.stdout.strip() == "unsafe"


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
