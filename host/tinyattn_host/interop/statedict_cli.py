"""The import-torch and export-torch commands of `python -m tinyattn_host`."""

import sys

from ..errors import UsageError, bad_file_is_input_error
from .arrayfiles import read_state_dict
from .describe import describe, draft_text
from .statedict import export_npz, import_npz, read_description


def import_torch_command(args):
    """The import-torch command; a bad file is an InputError (exit status 1)."""
    if args.describe:
        return describe_command(args)
    if args.layers is None or args.out is None:
        raise UsageError("import-torch needs LAYERS.json and -o MODEL.bin (or --describe to "
                         "draft layers.json from the state_dict)")
    with bad_file_is_input_error():
        config = import_npz(args.npz, read_description(args.layers), args.out)
    print("wrote %s: %d layers (%s)" % (args.out, len(config), ", ".join(s[0] for s in config)))
    return 0


def export_torch_command(args):
    """The export-torch command; a bad file is an InputError (exit status 1)."""
    with bad_file_is_input_error():
        layers = read_description(args.layers) if args.layers else None
        state = export_npz(args.model, args.out, layers)
    print("wrote %s: %d arrays" % (args.out, len(state)))
    return 0


def describe_command(args):
    """import-torch --describe: a draft layers.json on stdout, what it guessed on stderr."""
    with bad_file_is_input_error():
        state = read_state_dict(args.npz)
    draft, notes = describe({k: v.shape for k, v in state.items()})
    sys.stdout.write(draft_text(draft))
    for note in notes:
        print("note: " + note, file=sys.stderr)
    return 0
