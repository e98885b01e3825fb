"""The import-torch and export-torch commands of `python -m tinyattn_host`."""

import sys

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


STATEDICT_COMMANDS = {"import-torch": import_torch, "export-torch": export_torch}
