"""A virtual board's heap (--heap, make's HEAP=, $VIRTUAL_HEAP) is a real ulab's figure: with
the ulab stand-in, whose Python lists take several times ulab's memory, a board-sized heap
only fails (every request cut to one row, then NO_MEMORY), so it is refused before anything
runs, naming the fix."""

import os

from ..errors import UsageError
from . import unixport

# the commands whose --heap sizes the virtual board
VIRTUAL_HEAP_COMMANDS = ("run", "check-model", "virtual-board")


def refuse_heap_on_standin(args):
    """Raise UsageError when `args` (a parsed command line) would start a virtual board with a
    chosen heap on an interpreter without ulab."""
    if args.command not in VIRTUAL_HEAP_COMMANDS:
        return
    port = getattr(args, "port", None)
    if port not in (None, "auto", "virtual"):
        return  # a board: its own checks say --heap is for virtual boards
    given = ("--heap %s" % args.heap) if args.heap else (
        "VIRTUAL_HEAP=%s" % os.environ["VIRTUAL_HEAP"] if os.environ.get("VIRTUAL_HEAP")
        else None)
    if given and not unixport.has_ulab(unixport.interpreter()):
        raise UsageError(
            "%s: a heap size needs a real ulab, and the virtual board runs the ulab stand-in "
            "(its memory means nothing): give MICROPYTHON=/path/to/a unix port built with ulab "
            "(docs/testing.md), or leave the heap out" % given)
