"""mpremote's REPL on a board, or on a virtual board when there is none; deploys first.

    python -m tinyattn_host.repl [--port /dev/ttyACM0|auto|virtual] [--flash DIR]

The package is deployed first (only the files that differ are copied), so `import tinyattn`
works at the prompt. Ctrl-X (or Ctrl-]) leaves the REPL; a virtual board is stopped afterwards.
"""

import argparse
import subprocess
import sys

from . import cli
from .board import Board
from .ports import PORT_HELP, choose
from .unixport_process import die_with_parent


def repl(port):
    """Run `mpremote connect PORT repl` in this terminal; return its exit status."""
    with subprocess.Popen([sys.executable, "-m", "mpremote", "connect", port, "repl"],
                          preexec_fn=die_with_parent) as mpremote:
        try:
            return mpremote.wait()
        finally:
            mpremote.terminate()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host.repl",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", help=PORT_HELP)
    parser.add_argument("--flash", help="the virtual board's flash folder (default: temporary)")
    args = parser.parse_args(argv)
    with Board(port=choose(args.port), flash_dir=args.flash, deploy="always") as board:
        board.release()  # the port is mpremote's now
        return repl(board.port)


if __name__ == "__main__":
    sys.exit(cli.run(main))
