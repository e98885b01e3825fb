"""The import-torch, export-torch and check-model commands of `python -m tinyattn_host`."""

import sys

from .ports import PORT_HELP
from .statedict import export_npz, import_npz, read_description


def add_statedict_commands(commands):
    """Add the two subcommands to an argparse subparsers object."""
    imp = commands.add_parser("import-torch", help="a PyTorch state_dict .npz to a model file")
    imp.add_argument("npz", help="np.savez of the state_dict (PyTorch's names)")
    imp.add_argument("layers", help="JSON description: [{\"prefix\": ..., \"layer\": [...]}, ...]")
    imp.add_argument("-o", "--out", required=True, help="the tinyattn model file to write")
    exp = commands.add_parser("export-torch", help="a model file to a PyTorch state_dict .npz")
    exp.add_argument("model", help="a tinyattn model file")
    exp.add_argument("-o", "--out", required=True, help="the .npz to write")
    exp.add_argument("--layers", help="JSON description (default: the one import-torch kept)")
    chk = commands.add_parser("check-model", help="run a model file on the board against the "
                                                  "NumPy reference")
    chk.add_argument("model", help="a tinyattn model file")
    chk.add_argument("inputs", help=".npy of input rows (rows, features)")
    chk.add_argument("--expect", metavar="OUT.npy",
                     help="the outputs PyTorch gave for the same inputs: compared as well")
    chk.add_argument("--port", help=PORT_HELP)
    chk.add_argument("--batch-size", type=int, default=16)
    chk.add_argument("--heap", help="a virtual board's heap, e.g. 8m (a PSRAM board)")


def import_torch(args):
    """Run import-torch; exit code 0, or 1 with the reason on stderr."""
    try:
        config = import_npz(args.npz, read_description(args.layers), args.out)
    except (OSError, ValueError) as err:  # StateDictError, ModelFileError and JSON errors
        print("error: %s" % err, file=sys.stderr)
        return 1
    print("wrote %s: %d layers (%s)" % (args.out, len(config), ", ".join(s[0] for s in config)))
    return 0


def export_torch(args):
    """Run export-torch; exit code 0, or 1 with the reason on stderr."""
    try:
        layers = read_description(args.layers) if args.layers else None
        state = export_npz(args.model, args.out, layers)
    except (OSError, ValueError) as err:  # StateDictError, ModelFileError and JSON errors
        print("error: %s" % err, file=sys.stderr)
        return 1
    print("wrote %s: %d arrays" % (args.out, len(state)))
    return 0


def check_model_command(args):
    """Run check-model; exit code 0 when the device agrees with the reference (and the
    expected outputs), 1 if not or for a bad file, 2 for a board problem (BoardError, an
    error answer, no answer, a model too large for the board's heap)."""
    from .arrayfiles import read_array
    from .board import Board, DeviceReset
    from .model_check import DoesNotFit, check_model
    from .ports import choose
    from .protocol import DeviceError, LinkTimeout, ProtocolError

    try:
        X = read_array(args.inputs, "input rows")
        expect = read_array(args.expect, "expected outputs") if args.expect else None
        with Board(port=choose(args.port), deploy="auto", heap=args.heap) as board:
            ok, _ = check_model(board.start_link(), args.model, X, args.batch_size,
                                expect=expect)
    except (OSError, ValueError) as err:  # the files given: model, inputs, expected outputs
        print("error: %s" % err, file=sys.stderr)
        return 1
    except (DoesNotFit, DeviceError, LinkTimeout, ProtocolError, DeviceReset) as err:
        print("error: the board: %s" % err, file=sys.stderr)
        return 2
    return 0 if ok else 1


STATEDICT_COMMANDS = {"import-torch": import_torch, "export-torch": export_torch,
                      "check-model": check_model_command}
