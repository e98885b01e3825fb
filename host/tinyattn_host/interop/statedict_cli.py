"""The import-torch and export-torch commands of `python -m tinyattn_host`."""

from ..cli import output_path
from ..errors import bad_file_is_input_error
from .statedict import export_npz, import_npz, read_description


def import_torch_command(args):
    """The import-torch command; a bad file is an InputError (exit status 1)."""
    output_path(args.out, "-o")
    with bad_file_is_input_error():
        config = import_npz(args.npz, read_description(args.layers), args.out)
    print("wrote %s: %d layers (%s)" % (args.out, len(config), ", ".join(s[0] for s in config)))
    return 0


def export_torch_command(args):
    """The export-torch command; a bad file is an InputError (exit status 1)."""
    output_path(args.out, "-o")
    with bad_file_is_input_error():
        layers = read_description(args.layers) if args.layers else None
        state = export_npz(args.model, args.out, layers)
    print("wrote %s: %d arrays" % (args.out, len(state)))
    return 0
