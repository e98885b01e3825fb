"""mpremote's REPL on a board, or on a virtual board when no port is given.

    python -m tinyattn_host.repl [--port /dev/ttyACM0] [--flash DIR]

Ctrl-X (or Ctrl-]) leaves the REPL; a virtual board is stopped afterwards.
"""

import argparse
import subprocess
import sys


def repl(port):
    """Run `mpremote connect PORT repl` in this terminal; return its exit status."""
    return subprocess.call([sys.executable, "-m", "mpremote", "connect", port, "repl"])


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host.repl",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", help="serial port of the board; without it, a virtual board")
    parser.add_argument("--flash", help="the virtual board's flash folder (default: temporary)")
    args = parser.parse_args(argv)
    if args.port:
        return repl(args.port)
    from .virtual_board import VirtualBoard
    with VirtualBoard(flash_dir=args.flash) as board:
        print(board.banner, flush=True)
        return repl(board.port)


if __name__ == "__main__":
    sys.exit(main())
