"""What every command does around its work (python -m tinyattn_host, __main__.py).

`run(command, args)`: a HostError (errors.py) is one line on stderr, `error: <message>`, and
the error's exit status, never a traceback; so is an mpremote TransportError (a board that
went away: a board problem). SIGTERM (a timeout, a closed terminal) and SIGHUP unwind like
Ctrl-C, so every `with` block closes its port and stops its virtual board on the way out.
"""

import argparse
import signal
import sys

from mpremote.transport import TransportError

from .errors import BOARD_PROBLEM, INTERRUPTED, HostError, UsageError


class ArgumentParser(argparse.ArgumentParser):
    """argparse, whose usage errors are a UsageError (one line) instead of usage and exit."""

    def error(self, message):
        raise UsageError("%s: %s (%s --help)" % (self.prog, message, self.prog))


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
