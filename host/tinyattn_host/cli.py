"""What every command (run, bench, deploy, repl, flash) does around its work.

`run(main, argv)`: a board problem (BoardError) is one line on stderr and exit status 2, never
a traceback; SIGTERM (a timeout, a closed terminal) unwinds like Ctrl-C, so every `with` block
closes its port and stops its virtual board on the way out.
"""

import signal
import sys

from .ports import BoardError

BOARD_PROBLEM = 2


def _terminate(signum, frame):
    raise SystemExit(128 + signum)


def run(main, argv=None):
    """Call main(argv); return its exit status (2 for a BoardError, 130 for Ctrl-C)."""
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    try:
        return main(argv)
    except BoardError as err:
        print("error: %s" % err, file=sys.stderr)
        return BOARD_PROBLEM
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
