"""python -m tinyattn_host: the check of `make run`, `make demo`, and PyTorch state_dicts.

    python -m tinyattn_host run [--port P] [--batch-size N] [--report DIR] [--digits-rows N]
                                [--heap 300k]
    python -m tinyattn_host demo [--port P] [--epochs N] [--report DIR]
    python -m tinyattn_host import-torch | export-torch | check-model ...
"""

import argparse
import sys

from . import cli
from .board import Board
from .ports import PORT_HELP, BoardError, choose
from .statedict_cli import STATEDICT_COMMANDS, add_statedict_commands


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="push Iris and digits batches to the board and check "
                                          "every answer")
    run.add_argument("--batch-size", type=int, default=16)
    run.add_argument("--report", metavar="DIR", help="write summary.json and PNG plots there")
    run.add_argument("--deploy", choices=("auto", "always", "never"), default="auto",
                     help="copy device/tinyattn to the board: when its version differs (auto)")
    run.add_argument("--seed", type=int, default=42)
    run.add_argument("--heap", metavar="SIZE",
                     help="the virtual board's heap, e.g. 300k: a board without PSRAM "
                          "(default: $VIRTUAL_HEAP, else the interpreter's)")
    run.add_argument("--digits-rows", type=int, metavar="N",
                     help="digits test rows to send (default all; 64 on the ulab stand-in); "
                          "0: no digits check")
    demo = commands.add_parser("demo", help="tinyattn.demo() on the board, and a training curve")
    demo.add_argument("--epochs", type=int, default=100)
    demo.add_argument("--report", metavar="DIR", help="write demo.json and demo_training.png")
    for command in (run, demo):
        command.add_argument("--port", help=PORT_HELP)
        command.add_argument("--flash", help="flash folder of the virtual board (default: "
                                             "temporary)")
    add_statedict_commands(commands)
    args = parser.parse_args(argv)
    if args.command in STATEDICT_COMMANDS:
        return STATEDICT_COMMANDS[args.command](args)
    if args.command == "run" and args.batch_size < 1:
        parser.error("--batch-size must be at least 1")
    if args.command == "demo" and args.epochs < 1:
        parser.error("--epochs must be at least 1")
    return (check if args.command == "run" else demo_report)(args)


def check(args):
    from .harness import Check, write_report

    port = choose(args.port)
    if args.heap and port is not None:
        raise BoardError("--heap sizes the virtual board's heap; %s is a board" % port)
    with Board(port=port, flash_dir=args.flash, deploy=args.deploy, heap=args.heap) as board:
        info = board.info
        print("device: MicroPython %s, ulab %s, tinyattn %s, %d bytes free"
              % (info["micropython"], info["ulab"], info["tinyattn"], info["free"]))
        run = Check(board, batch_size=args.batch_size, seed=args.seed,
                    digits=True if args.digits_rows is None else args.digits_rows)
        summary = run.run()
    print(summary.line())
    if args.report:
        for path in write_report(args.report, summary, run.samples):
            print("wrote %s" % path)
    return 0 if summary.ok else 1


def demo_report(args):
    from .demo import run_demo, write_report

    with Board(port=choose(args.port), flash_dir=args.flash) as board:
        history = run_demo(board, epochs=args.epochs)
    if args.report:
        for path in write_report(args.report, history):
            print("wrote %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
