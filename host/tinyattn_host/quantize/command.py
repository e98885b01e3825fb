"""The quantize command: `python -m tinyattn_host quantize MODEL.bin CALIBRATION.npy -o
MODEL-int8.bin [--batch-size N] [--mask LENGTHS.npy]`.

The float model file (import-torch's, or a board's tinyattn.save) is calibrated on the rows of
CALIBRATION.npy, batch_size samples at a time (a progress line on a terminal), and its int8
model written to -o, the file tinyattn.int8.load reads on the board. The command line and -o
are checked before any work (exit 2); a bad model or calibration file is one `error:` line
(exit 1).
"""

import os

from ..errors import UsageError, bad_file_is_input_error
from ..checks.progress import Progress
from .files import quantize_file


def writable_output(path):
    """UsageError unless a file can be written at `path` (its folder exists and takes files)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError("-o %s is a folder; give the int8 model file to write" % path)
    if not os.path.isdir(folder):
        raise UsageError("-o %s: no such folder %s" % (path, folder))
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise UsageError("-o %s: cannot write there (permission denied)" % path)


def check_arguments(args):
    """UsageError for a command line that cannot work, before any file is read."""
    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1, got %d" % args.batch_size)
    writable_output(args.out)


def quantize_command(args):
    """The quantize command: exit 0 with the int8 file written, 1 for a bad file, 2 for a bad
    command line."""
    check_arguments(args)
    progress = Progress()
    try:
        with bad_file_is_input_error():
            specs, _, size = quantize_file(
                args.model, args.calibration, args.out, args.batch_size, args.mask,
                lambda done, total: progress.show(done, total, "calibration samples"))
    finally:
        progress.clear()
    float_size = os.path.getsize(args.model)
    print("wrote %s: %d int8 layers (%s), %d bytes, %.0f%% of %s's %d"
          % (args.out, len(specs), ", ".join(s["kind"] for s in specs), size,
             100.0 * size / float_size, args.model, float_size))
    return 0
