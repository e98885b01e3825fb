"""The import-torch and export-torch commands of `python -m tinyattn_host`."""

import sys

from ..cli import output_path
from ..errors import UsageError, bad_file_is_input_error
from .arrayfiles import read_state_dict
from .describe import describe, draft_text
from .statedict import export_npz, import_npz, import_state_dict, read_description


def import_torch_command(args):
    """The import-torch command; a bad file is an InputError (exit status 1). With --int8
    CALIBRATION.npy the file written is the int8 model (quantize's), not the float one."""
    if args.describe:
        return describe_command(args)
    if args.layers is None or args.out is None:
        raise UsageError("import-torch needs LAYERS.json and -o MODEL.bin (or --describe to "
                         "draft layers.json from the state_dict)")
    output_path(args.out, "-o")
    if args.int8 is None:
        if args.batch_size is not None or args.mask is not None:
            raise UsageError("--batch-size and --mask are --int8's: give the calibration rows "
                             "too (--int8 CALIBRATION.npy)")
        with bad_file_is_input_error():
            config = import_npz(args.npz, read_description(args.layers), args.out)
        print("wrote %s: %d layers (%s)" % (args.out, len(config),
                                            ", ".join(s[0] for s in config)))
        return 0
    return _import_int8(args)


def _import_int8(args):
    """import-torch --int8: the state_dict straight to an int8 model file."""
    from ..checks.progress import Progress
    from ..quantize.command import check_arguments
    from ..quantize.files import quantize_to_file

    if args.batch_size is None:
        args.batch_size = 16
    check_arguments(args)
    progress = Progress()
    try:
        with bad_file_is_input_error():
            config, params = import_state_dict(read_state_dict(args.npz),
                                               read_description(args.layers))
            specs, _, size = quantize_to_file(
                config, params, args.int8, args.out, args.batch_size, args.mask,
                lambda done, total: progress.show(done, total, "calibration samples"))
    finally:
        progress.clear()
    print("wrote %s: %d int8 layers (%s), %d bytes" % (
        args.out, len(specs), ", ".join(s["kind"] for s in specs), size))
    return 0


def export_torch_command(args):
    """The export-torch command; a bad file is an InputError (exit status 1)."""
    output_path(args.out, "-o")
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
