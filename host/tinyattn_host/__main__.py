"""python -m tinyattn_host <command>, or tinyattn <command>: every host command, one table.

    .venv/bin/python -m tinyattn_host --help            # the commands
    .venv/bin/python -m tinyattn_host <command> --help  # one command's options

A command's work is a function in the module named beside it, imported only when that
command runs; cli.run turns its errors into one line and an exit status (errors.py).
"""

import importlib
import sys
from pathlib import Path

from . import cli
from .board.ports import PORT_HELP

FLASH_HELP = "the virtual board's flash folder (default: temporary)"


def _port(parser):
    parser.add_argument("--port", help=PORT_HELP)


def _port_flash(parser):
    _port(parser)
    parser.add_argument("--flash", help=FLASH_HELP)


def _run(p):
    _port_flash(p)
    p.add_argument("--batch-size", type=cli.positive_int, default=16)
    p.add_argument("--report", metavar="DIR", help="write summary.json and PNG plots there")
    p.add_argument("--deploy", choices=("auto", "always", "never"), default="auto",
                   help="copy device/tinyattn to the board: when its version differs (auto)")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--heap", metavar="SIZE", type=cli.heap_argument,
                   help="the virtual board's heap, e.g. 300k: a board without PSRAM "
                        "(default: $VIRTUAL_HEAP, else the interpreter's)")
    p.add_argument("--digits-rows", type=int, metavar="N",
                   help="digits test rows to send (default all; 64 on the ulab stand-in); "
                        "0: no digits check")
    p.add_argument("--vowels-rows", type=int, metavar="N",
                   help="vowels test utterances to send in padded batches, then one streamed "
                        "(default all; 32 on the ulab stand-in); 0: no vowels check")


def _demo(p):
    _port_flash(p)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--report", metavar="DIR", help="write demo.json and demo_training.png")


def _deploy(p):
    _port_flash(p)
    p.add_argument("--py", action="store_true", help="copy .py sources, compile nothing")


def _flash(p):
    from .board.flash import DEFAULT_BAUD

    p.add_argument("--port", help="serial port of the board, e.g. /dev/ttyACM0, or auto "
                                  "(the default: the one board attached)")
    p.add_argument("--firmware", help="merged ESP32-S3 firmware .bin with ulab")
    p.add_argument("--baud", type=int, default=DEFAULT_BAUD,
                   help=f"esptool baud rate (default {DEFAULT_BAUD}; 115200 if it fails)")
    p.add_argument("--dry-run", action="store_true",
                   help="check the firmware and print the esptool calls, write nothing")
    p.add_argument("--no-deploy", action="store_true", help="do not deploy device/ after")


def _bench(p):
    from .bench.bench import DEFAULT_DOC, DEFAULT_OUT

    _port(p)
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for bench.json (default %(default)s)")
    p.add_argument("--doc", default=DEFAULT_DOC,
                   help="the page to update, its plot beside it (default %(default)s)")
    p.add_argument("--quick", action="store_true", help="a tiny grid (for tests)")
    p.add_argument("--repeats", type=cli.positive_int, default=11,
                   help="timed rounds at most (default 11)")
    p.add_argument("--cap", type=float, help="skip calls predicted slower than this many "
                                             "seconds (default 1, 0.2 with the ulab stand-in)")
    p.add_argument("--heap", default="256k", type=cli.heap_argument,
                   help="unix port heap for the largest-S search (default %(default)s)")


def _chipcost(p):
    p.add_argument("source", help="a MicroPython file with viper/native functions")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--function", action="append", metavar="NAME",
                   help="only this function (repeatable)")
    p.add_argument("--show-asm", action="store_true", help="print each loop's body")
    p.add_argument("--macs", action="append", default=[], metavar="NAME=N",
                   help="MACs per iteration of NAME's inner loop (default: its multiplies)")


def _emulate(p):
    p.add_argument("--doc", help="a markdown page to put the section into "
                                 "(make emulate: docs/performance.md)")


def _virtual_board(p):
    p.add_argument("--flash", help="folder that plays the flash (default: a temporary one)")
    p.add_argument("--heap", type=cli.heap_argument,
                   help="MicroPython heap size, for example 300k (a board without "
                                  "PSRAM) or 8m (default: $VIRTUAL_HEAP)")
    p.add_argument("--uart", action="store_true",
                   help="a stdin that drops what overflows a UART's ring buffer, as an "
                        "ESP32's UART does (uart_board.py)")


def _import_torch(p):
    p.add_argument("npz", help="np.savez of the state_dict (PyTorch's names)")
    p.add_argument("layers", nargs="?", help="JSON description: [{\"prefix\": ..., \"layer\": "
                                             "{\"kind\": ..., ...}}, ...]")
    p.add_argument("-o", "--out", help="the tinyattn model file to write")
    p.add_argument("--describe", action="store_true",
                   help="print a draft layers.json from the state_dict's keys and shapes "
                        "(what it guessed: on stderr)")
    p.add_argument("--int8", metavar="CALIBRATION.npy",
                   help="write the int8 model instead, calibrated on these rows (as quantize)")
    p.add_argument("--batch-size", type=int, help="(--int8) as quantize's (default 16)")
    p.add_argument("--mask", metavar="LENGTHS.npy", help="(--int8) as quantize's")


def _export_torch(p):
    p.add_argument("model", help="a tinyattn model file")
    p.add_argument("-o", "--out", required=True, help="the .npz to write")
    p.add_argument("--layers", help="JSON description (default: the one import-torch kept)")


def _quantize(p):
    p.add_argument("model", help="a float model file (import-torch's, or tinyattn.save's)")
    p.add_argument("calibration", help=".npy of calibration rows (rows, features), float")
    p.add_argument("-o", "--out", required=True, help="the int8 model file to write")
    p.add_argument("--batch-size", type=int, default=16,
                   help="samples calibrated at a time (default %(default)s; the same file "
                        "whatever it is)")
    p.add_argument("--mask", metavar="LENGTHS.npy",
                   help="each calibration sample's length (ints, 1..S): its padding mask")


def _info(p):
    p.add_argument("model", help="a tinyattn model file, float or int8")


def _import_llama2c(p):
    p.add_argument("checkpoint", help="llama2.c's model.bin (the legacy format run.c reads)")
    p.add_argument("-o", "--out", required=True, help="the tinyattn model file to write")
    p.add_argument("--int8", metavar="CALIBRATION",
                   help="write the int8 model, calibrated on this UTF-8 text (encoded with "
                   "the tokenizer) or .npy of token ids")
    p.add_argument("--tokenizer", help="--int8's tokenizer.bin (default: beside the checkpoint)")


def _export_llama2c(p):
    p.add_argument("model", help="a tinyattn decoder model file (import-llama2c's)")
    p.add_argument("-o", "--out", required=True, help="the model.bin to write for run.c")


def _generate(p):
    _port_flash(p)
    p.add_argument("model", help="a tinyattn decoder model file (import-llama2c's)")
    p.add_argument("--prompt", default="", help="the text to go on from")
    p.add_argument("--steps", type=int, default=40, help="new tokens at most (default 40)")
    p.add_argument("--tokenizer", help="llama2.c's tokenizer.bin (default: beside the model)")
    p.add_argument("--temperature", type=float, default=0.0, help="0: greedy (the default)")
    p.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling (default 1)")
    p.add_argument("--seed", type=int, default=None, help="the sampling's seed")
    p.add_argument("--heap", help="a virtual board's heap, e.g. 300k (a board without PSRAM)")


def _finetune(p):
    _port_flash(p)
    p.add_argument("model", help="a tinyattn decoder model file (import-llama2c's)")
    p.add_argument("text", help="a UTF-8 text file to fine-tune on")
    p.add_argument("-o", "--out", required=True, help="the tuned model file to write")
    p.add_argument("--tokenizer", help="llama2.c's tokenizer.bin (default: beside the model)")
    p.add_argument("--steps", type=int, default=20, help="Adam steps (default 20)")
    p.add_argument("--context", type=int, default=32, help="tokens a step reads (default 32)")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="the windows' seed (default 0)")
    p.add_argument("--heap", help="a virtual board's heap, e.g. 2m")


def _check_model(p):
    _port(p)
    p.add_argument("model", help="a tinyattn model file")
    p.add_argument("inputs", help=".npy of input rows (rows, features)")
    p.add_argument("--expect", metavar="OUT.npy",
                   help="the outputs PyTorch gave for the same inputs: compared as well")
    p.add_argument("--batch-size", type=cli.positive_int, default=16)
    p.add_argument("--heap", type=cli.heap_argument,
                   help="a virtual board's heap, e.g. 8m (a PSRAM board)")


def _vowels(p):
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--report", metavar="DIR", help="write vowels.json and vowels_training.png")
    p.add_argument("--causal", action="store_true",
                   help="the model with a causal encoder, as a stream runs it: its accuracy "
                        "after the last frame and after half the frames")
    p.add_argument("--chip-estimate", action="store_true",
                   help="print the ESP32-S3 estimate of a streamed frame and stop (no training)")
    p.add_argument("--save", metavar="FILE",
                   help="write the trained model as a tinyattn model file (for the board)")
    p.add_argument("--finetune-on-device", action="store_true",
                   help="then fine-tune it on a virtual board ($MICROPYTHON) with dropout: "
                        "accuracy before and after, times, heap")
    p.add_argument("--train-on-device", action="store_true",
                   help="instead: train fresh weights on a virtual board with the host's "
                        "schedule (no host training); the same figures")
    p.add_argument("--dropout", type=float, default=0.1, help="(fine-tune) default 0.1")
    p.add_argument("--epochs", type=int, default=3, help="(fine-tune) default 3")
    p.add_argument("--lr", type=float, default=5e-4, help="(fine-tune) Adam's, default 5e-4")
    p.add_argument("--heap", default="8m", type=cli.heap_argument,
                   help="(fine-tune) the virtual board's heap, default 8m")
    p.add_argument("--data", metavar="DIR",
                   help="the folder of the .ts files (default: data/japanese_vowels)")
    p.add_argument("--rows", type=int, metavar="N",
                   help="(fine-tune) the first N train and test utterances only (a quick check)")
    p.add_argument("--smallest-heap", action="store_true",
                   help="(fine-tune) also find the smallest heap that completes it")


def _nothing(p):
    pass


# name: (what it does, its arguments, "module:function" that does it)
COMMANDS = {
    "run": ("push Iris, digits and vowels batches to the board and check every answer (make run)",
            _run, "checks.run_check:run_command"),
    "demo": ("tinyattn.demo() on the board, and its training curve (make demo)",
             _demo, "checks.demo:demo_command"),
    "deploy": ("compile device/tinyattn and copy it to /lib/tinyattn (make deploy)",
               _deploy, "board.board:deploy_command"),
    "flash": ("check, erase and write an ESP32-S3 firmware with ulab, then deploy (make flash)",
              _flash, "board.flash:flash_command"),
    "repl": ("deploy, then mpremote's REPL on the board (make repl)",
             _port_flash, "board.repl:repl_command"),
    "bench": ("speed and memory tables, JSON and a plot (make bench)",
              _bench, "bench.bench:bench_command"),
    "devs": ("the USB serial ports that may be an ESP32-S3 (make devs)",
             _nothing, "board.ports:devs_command"),
    "virtual-board": ("a virtual board (the unix port on a pseudo-terminal) until Ctrl-C",
                      _virtual_board, "virtual.serve:virtual_board_command"),
    "chipcost": ("instructions per MAC of the viper loops in a file, from its xtensawin code",
                 _chipcost, "chipcost.chipcost:chipcost_command"),
    "emulate": ("the int8 kernels' xtensawin code in qemu-system-xtensa: executed "
                "instructions per MAC, and per token of the int8 language model (make "
                "emulate)", _emulate, "emulator.emulate_command:emulate_command"),
    "emulate-pie": ("the PIE kernel on Espressif's emulated ESP32-S3 ($QEMU_XTENSA_S3): "
                    "instructions per MAC", _emulate, "emulator.pie_counts:pie_command"),
    "digits": ("train the digits model on the host and print its test accuracy",
               _nothing, "digits:digits_command"),
    "vowels": ("train the Japanese vowels model on the host and print its test accuracy",
               _vowels, "vowels:vowels_command"),
    "mip-package": ("rewrite package.json and package-bench.json (mip's manifests)",
                    _nothing, "board.mip_package:mip_package_command"),
    "import-torch": ("a PyTorch state_dict .npz to a model file",
                     _import_torch, "interop.statedict_cli:import_torch_command"),
    "export-torch": ("a model file to a PyTorch state_dict .npz",
                     _export_torch, "interop.statedict_cli:export_torch_command"),
    "quantize": ("a float model file and calibration rows to the int8 model file a board's "
                 "tinyattn.int8.load reads", _quantize, "quantize.command:quantize_command"),
    "info": ("what a model file holds: its layers, parameters, the bytes of its arrays",
             _info, "modelinfo:info_command"),
    "import-llama2c": ("llama2.c's model.bin to a model file",
                       _import_llama2c, "interop.llama2c_cli:import_llama2c_command"),
    "export-llama2c": ("a decoder model file to llama2.c's model.bin (run.c runs it)",
                       _export_llama2c, "interop.llama2c_cli:export_llama2c_command"),
    "generate": ("a language model writes on the board: text as it comes, then tokens/s",
                 _generate, "checks.generate:generate_command"),
    "finetune": ("a language model fine-tuned on the board on a text, brought back",
                 _finetune, "checks.finetune:finetune_command"),
    "check-model": ("run a model file on the board against the NumPy reference",
                    _check_model, "checks.model_check:check_model_command"),
}


def parser():
    """The argument parser of every command."""
    from . import __version__

    prog = "tinyattn" if Path(sys.argv[0]).name == "tinyattn" else "python -m tinyattn_host"
    top = cli.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    top.add_argument("--version", action="version", version=f"tinyattn {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="command",
                                  parser_class=cli.ArgumentParser)
    for name, (help_text, arguments, _) in COMMANDS.items():
        arguments(commands.add_parser(name, help=help_text, description=help_text))
    return top


def handler(name):
    """The function that does command `name`."""
    module, _, function = COMMANDS[name][2].partition(":")
    return getattr(importlib.import_module("." + module, __package__), function)


def main(argv=None):
    """Parse argv, run the command; return its exit status."""
    return cli.run(lambda argv: _dispatch(parser().parse_args(argv)), argv)


def _dispatch(args):
    from .virtual.heap_option import refuse_heap_on_standin

    refuse_heap_on_standin(args)
    return handler(args.command)(args)


if __name__ == "__main__":
    sys.exit(main())
