"""The info command: `python -m tinyattn_host info MODEL.bin`, what a model file holds.

A float model file (import-torch's, tinyattn.save's) or an int8 one (quantize's,
tinyattn.int8's save): its layers, each layer's parameters and the bytes of its arrays, their
totals, the input width and the file's size. The heap a board needs to load and run it is
measured on a board: `check-model`.
"""

import os

from . import modelfile
from .device_modules import device_module
from .errors import InputError, bad_file_is_input_error


def layer_arrays(arrays, i):
    """(parameters, bytes) of layer i's arrays, named "<i>.<name>"."""
    mine = [a for name, a in arrays.items() if name.split(".", 1)[0] == str(i)]
    return sum(a.size for a in mine), sum(a.nbytes for a in mine)


def describe(path):
    """The lines info prints for the model file at `path`."""
    if not os.path.isfile(path):
        raise InputError("%s: no such file" % path)
    kind, meta, arrays = modelfile.read_model(path)
    size = os.path.getsize(path)
    if kind == modelfile.SEQUENTIAL:
        names = [" ".join(str(v) for v in spec) for spec in meta["config"]]
        width = device_module("nn/flow").follow(meta["config"])[0]
        what = "a float model (float32 arrays)"
    else:
        names = [spec["kind"] for spec in meta["layers"]]
        width = None
        what = "an int8 model (int8 weights, int32 biases)"
    lines = ["%s: %s, %d layers, %s bytes" % (path, what, len(names), "{:,}".format(size))]
    for i, name in enumerate(names):
        count, nbytes = layer_arrays(arrays, i)
        lines.append("  %2d  %-64s %7s parameters %7s bytes" % (
            i, name, "{:,}".format(count), "{:,}".format(nbytes)))
    total = sum(a.size for a in arrays.values())
    nbytes = sum(a.nbytes for a in arrays.values())
    lines.append("%s parameters, %s bytes of arrays (%.0f%% of the file)%s" % (
        "{:,}".format(total), "{:,}".format(nbytes), 100.0 * nbytes / size,
        "; input rows of %d numbers" % width if width else ""))
    return lines


def info_command(args):
    """The info command: exit 0, or 1 for a file that is not a model file."""
    with bad_file_is_input_error():
        lines = describe(args.model)
    print("\n".join(lines))
    return 0
