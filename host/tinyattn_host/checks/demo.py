"""`make demo`: tinyattn.demo() on the board, its output as it comes, and a report.

    .venv/bin/python -m tinyattn_host demo [--port P] [--epochs N] [--report DIR]

The device trains the Iris model and sends, through the link (RUN), each line it prints at the
REPL; with a report folder, `demo.json` gets the loss and the test accuracy after every epoch
and `demo_training.png` plots them.
"""

import json
import sys
from pathlib import Path

from . import plots
from .. import protocol
from ..board.board import Board
from ..board.ports import choose
from ..errors import BoardError, UsageError

SILENCE = 300  # seconds without a record after which the device is given up on


def run_demo(board, epochs=100, out=sys.stdout):
    """Run the demo on an open board.Board through the link (RUN of
    tinyattn.iris_demo.records), copy its lines to `out` as they come; return its history."""
    history = {}

    def on_record(record):
        if record.get("kind") == "line":
            out.write(record["text"] + "\n")
            out.flush()
        elif record.get("kind") == "history":
            history.update((k, v) for k, v in record.items() if k != "kind")

    link = board.link or board.start_link()
    try:
        link.run("iris_demo", "records", on_record, {"epochs": epochs}, timeout=SILENCE)
    except protocol.LinkTimeout as err:
        raise BoardError("the demo did not finish on %s: %s" % (board.port, err)) from None
    except protocol.ErrorReply as err:
        raise BoardError("the demo failed on the device: %s" % err.message) from None
    return history


def write_report(directory, history):
    """demo.json and demo_training.png in `directory`; returns their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "demo.json").write_text(json.dumps(history, indent=1))
    epochs = range(1, len(history["loss"]) + 1)
    curve = plots.training_curve(
        directory / "demo_training.png",
        "tinyattn.demo() on the device: Iris, 120 training rows, 30 test rows",
        history["loss"], {"test rows": (epochs, history["test_accuracy"])})
    return [directory / "demo.json", curve]


def demo_command(args):
    """The demo command (`make demo`): run_demo on the board, then the report if asked."""
    if args.epochs < 1:
        raise UsageError("--epochs must be at least 1")
    with Board(port=choose(args.port), flash_dir=args.flash) as board:
        history = run_demo(board, epochs=args.epochs)
    if args.report:
        for path in write_report(args.report, history):
            print("wrote %s" % path)
    return 0
