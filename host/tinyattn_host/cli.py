"""What every command does around its work (python -m tinyattn_host, __main__.py).

`run(command, args)`: a HostError (errors.py) is one line on stderr, `error: <message>`, and
the error's exit status, never a traceback; so is an mpremote TransportError (a board that
went away: a board problem). SIGTERM (a timeout, a closed terminal) and SIGHUP unwind like
Ctrl-C, so every `with` block closes its port and stops its virtual board on the way out.
"""

import argparse
import os
import re
import signal
import sys

from mpremote.transport import TransportError

from .errors import BOARD_PROBLEM, INTERRUPTED, HostError, UsageError


class ArgumentParser(argparse.ArgumentParser):
    """argparse, whose usage errors are a UsageError (one line) instead of usage and exit."""

    def error(self, message):
        raise UsageError("%s: %s (%s --help)" % (self.prog, message, self.prog))


def positive_int(text):
    """argparse type: an int >= 1 (a batch size of 0 or -3 is a bad command line)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("must be an int >= 1, got %r" % text)
    return value


HEAP_SIZE = re.compile(r"([1-9][0-9]*)([kKmM]?)$")
SMALLEST_HEAP = 16 * 1024  # less, and the interpreter stops in a MemoryError as it starts
HEAP_RULE = "a heap size is bytes, or k or m of them, at least 16k, e.g. 300k or 8m"


def heap_size(text, what="--heap"):
    """A MicroPython -X heapsize= value, such as 300k or 8m; UsageError naming `what` for
    another (the interpreter would exit at once, and a virtual board boot it again and
    again: "Invalid command line arguments", or a MemoryError below 16k)."""
    found = HEAP_SIZE.match(text) if isinstance(text, str) else None
    if found is None or int(found.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[
            found.group(2).lower()] < SMALLEST_HEAP:
        raise UsageError("%s=%r: %s" % (what, text, HEAP_RULE))
    return text


def heap_argument(text):
    """argparse type of --heap (heap_size)."""
    try:
        return heap_size(text)
    except UsageError:
        raise argparse.ArgumentTypeError("%r: %s" % (text, HEAP_RULE)) from None


def output_path(path, what):
    """UsageError unless a file can be written at `path` (its folder there and writable, the
    path no folder): checked before any work, so none is lost at the end."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError("%s %s is a folder, not a file" % (what, path))
    if not os.path.isdir(folder):
        raise UsageError("%s %s: no folder %s" % (what, path, folder))
    if not os.access(folder, os.W_OK):
        raise UsageError("%s %s: the folder %s is not writable" % (what, path, folder))
    return path


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


def run(command, args):
    """command(args) -> its exit status (0 when it returns None); errors as the docstring says."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        status = command(args)
    except HostError as err:
        return fail(err, err.exit_status)
    except TransportError as err:
        return fail("the board stopped answering: %s" % err, BOARD_PROBLEM)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    return 0 if status is None else status


def fail(message, status):
    """Print `error: message` on stderr, as one line; return `status`."""
    text = " ".join(line.strip() for line in str(message).strip().splitlines())
    print("error: %s" % (text or type(message).__name__), file=sys.stderr)
    return status
