"""What can go wrong in a host command, one class per cause, each with its exit status.

Every command of `python -m tinyattn_host` turns a HostError into one line on stderr
(`error: <message>`) and exits with the error's `exit_status` (cli.run): 1 for a bad input
file, a device that refused a request or a flash that did not complete; 2 for a bad command
line (as argparse) or a board problem; 130 for Ctrl-C. A check whose numbers disagree is no
error: it prints its table and exits 1.
"""

import contextlib

BAD_INPUT = 1
BOARD_PROBLEM = 2
USAGE = 2  # argparse's status for a bad command line
INTERRUPTED = 130


class HostError(Exception):
    """A problem the message explains; `exit_status` is the command's exit status."""

    exit_status = BAD_INPUT


class InputError(HostError, ValueError):
    """A bad argument or input file (a model file, a state_dict, a firmware image, inputs)."""


class UsageError(HostError):
    """A command line that cannot work: a missing or bad argument, a file that is not there."""

    exit_status = USAGE


class BoardError(HostError):
    """The board cannot be used as it is (no such port, busy, silent, no ulab, another
    tinyattn version, a deploy that failed); the message says why and what to do."""

    exit_status = BOARD_PROBLEM


class DeviceError(HostError):
    """The device answered a request with an error (it refused the model, the inputs...)."""


@contextlib.contextmanager
def bad_file_is_input_error():
    """An OSError or ValueError inside (a missing file, bad JSON or .npy) is an InputError."""
    try:
        yield
    except HostError:
        raise
    except (OSError, ValueError) as err:
        if isinstance(err, OSError) and err.filename and err.strerror:  # as arrayfiles names one
            raise InputError("%s: %s" % (err.filename, err.strerror)) from None
        raise InputError(str(err)) from None
