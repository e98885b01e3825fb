"""`make demo`: tinyattn.demo() on the board, its output as it comes, and a report.

    .venv/bin/python -m tinyattn_host demo [--port P] [--epochs N] [--report DIR]

The device trains the Iris model and prints what it prints at the REPL; with a report folder,
`demo.json` gets the loss and the test accuracy after every epoch and `demo_training.png`
plots them.
"""

import json
import sys
from pathlib import Path

from mpremote.transport import TransportError

from . import plots
from ..board.board import Board
from ..board.ports import choose
from ..errors import BoardError, UsageError

MARK = "@@HISTORY "
SILENCE = 300  # seconds without output after which the device is given up on


def run_demo(board, epochs=100, out=sys.stdout):
    """Run the demo on an open board.Board, copy its output to `out`; return its history."""
    code = ("import json, tinyattn\nh = {}\ntinyattn.demo(epochs=%d, history=h)\n"
            "print(%r + json.dumps(h))\n" % (epochs, MARK))
    pending = bytearray()
    history = {}

    def consume(data):
        pending.extend(data.replace(b"\x04", b""))
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            text = line.decode(errors="replace").rstrip("\r")
            if text.startswith(MARK):
                history.update(json.loads(text[len(MARK):]))
            else:
                out.write(text + "\n")
                out.flush()

    try:
        _, error = board.transport.exec_raw(code, timeout=SILENCE, data_consumer=consume)
    except TransportError as err:
        raise BoardError("the demo did not finish on %s: %s" % (board.port, err)) from None
    if error:
        raise BoardError("the demo failed on the device: %s"
                         % error.decode(errors="replace").strip().splitlines()[-1])
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
