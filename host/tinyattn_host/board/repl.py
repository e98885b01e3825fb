"""mpremote's REPL on a board, or on a virtual board when there is none; deploys first.

    .venv/bin/python -m tinyattn_host repl [--port /dev/ttyACM0|auto|virtual] [--flash DIR]

The package is deployed first (only the files that differ are copied), so `import tinyattn`
works at the prompt. Ctrl-X (or Ctrl-]) leaves the REPL; a virtual board is stopped afterwards.
"""

import subprocess
import sys

from .board import Board
from .ports import choose
from ..virtual.unixport_process import die_with_parent


def repl(port):
    """Run `mpremote connect PORT repl` in this terminal; return its exit status."""
    with subprocess.Popen([sys.executable, "-m", "mpremote", "connect", port, "repl"],
                          preexec_fn=die_with_parent) as mpremote:
        try:
            return mpremote.wait()
        finally:
            mpremote.terminate()


def repl_command(args):
    """The repl command: deploy, then mpremote's REPL; a virtual board is stopped afterwards."""
    with Board(port=choose(args.port), flash_dir=args.flash, deploy="always") as board:
        board.release()  # the port is mpremote's now
        return repl(board.port)
