"""python -m tinyattn_host run [--port P] [--batch-size N] [--report DIR]: the check of `make run`."""

import argparse
import sys

from . import cli
from .board import Board
from .ports import choose


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="push Iris batches to the board and check every answer")
    run.add_argument("--port", help="serial port of the board, auto, or virtual (default: the "
                                    "one board attached, else a virtual board)")
    run.add_argument("--flash", help="flash folder of the virtual board (default: temporary)")
    run.add_argument("--batch-size", type=int, default=16)
    run.add_argument("--report", metavar="DIR", help="write summary.json and PNG plots there")
    run.add_argument("--deploy", choices=("auto", "always", "never"), default="auto",
                     help="copy device/tinyattn to the board: when its version differs (auto)")
    run.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    from .harness import Check, write_report

    with Board(port=choose(args.port), flash_dir=args.flash, deploy=args.deploy) as board:
        info = board.info
        print("device: MicroPython %s, ulab %s, tinyattn %s, %d bytes free"
              % (info["micropython"], info["ulab"], info["tinyattn"], info["free"]))
        check = Check(board, batch_size=args.batch_size, seed=args.seed)
        summary = check.run()
    print(summary.line())
    if args.report:
        for path in write_report(args.report, summary, check.samples):
            print("wrote %s" % path)
    return 0 if summary.ok else 1


if __name__ == "__main__":
    sys.exit(cli.run(main))
