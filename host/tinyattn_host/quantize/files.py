"""A float model file and a .npy of calibration rows to an int8 model file, on the host: each
bad file refused in one line (InputError) before any work, the output written atomically."""

import numpy as np

from .. import modelfile
from ..device_modules import device_module
from ..errors import InputError
from ..interop.arrayfiles import read_array
from ..reference.kinds import full_entry
from .model import model_bytes, quantize

SEQ_LEN_OF = {"SelfAttention": 3, "GlobalAvgPool": 1, "TransformerEncoderLayer": 8}
"""Where the sequence length is in the config of each kind that takes a padding mask."""


class CalibrationError(InputError):
    """Calibration rows (or their lengths) that the model cannot take; the message says why."""


def read_float_model(path):
    """(config, params as float64) of a float model file; an int8 file is refused."""
    kind, _, _ = modelfile.read_model(path)
    if kind != modelfile.SEQUENTIAL:
        raise InputError("%s holds a %r model; quantize takes a float model file (%r, as "
                         "import-torch or tinyattn.save writes it)" % (path, kind,
                                                                       modelfile.SEQUENTIAL))
    meta, arrays = modelfile.read_float_model(path)  # checked as the board checks it
    return ([full_entry(entry) for entry in meta["config"]],
            {k: v.astype(np.float64) for k, v in arrays.items()})


def check_rows(x, width, rows_per_sample, what):
    """x as float64 rows of the model's input (float32 values, as a board holds them);
    CalibrationError naming `what` unless they are finite rows of `width` numbers."""
    x = np.asarray(x)
    if x.dtype.kind not in "fiu":
        raise CalibrationError("%s holds %s values, not numbers" % (what, x.dtype))
    if x.ndim != 2:
        raise CalibrationError("%s is an array of %d dimensions %s; the model takes rows "
                               "(samples, features)" % (what, x.ndim, x.shape))
    if x.shape[0] == 0:
        raise CalibrationError("%s holds no rows" % what)
    if width is not None and x.shape[1] != width:
        raise CalibrationError("%s has rows of %d features; the model takes rows of %d"
                               % (what, x.shape[1], width))
    if x.shape[0] % rows_per_sample:
        raise CalibrationError("%s has %d rows; the model takes samples of %d rows"
                               % (what, x.shape[0], rows_per_sample))
    with np.errstate(over="ignore"):  # beyond float32: infinity, refused below
        x = x.astype(np.float32)
    if not np.isfinite(x).all():
        raise CalibrationError("%s holds NaN or infinity (as float32); calibration rows must "
                               "be finite" % what)
    return x.astype(np.float64)


def mask_of(lengths, samples, config, what):
    """The padding mask (samples, S) of 0/1 of each sample's length (1 <= length <= S)."""
    S = next((spec[SEQ_LEN_OF[spec[0]]] for spec in config if spec[0] in SEQ_LEN_OF), None)
    if S is None:
        raise CalibrationError("the model has no layer that takes a padding mask (--mask)")
    lengths = np.asarray(lengths)
    if lengths.dtype.kind not in "iu" or lengths.shape != (samples,):
        raise CalibrationError("%s must be one integer length a sample (%d), got %s of shape "
                               "%s" % (what, samples, lengths.dtype, lengths.shape))
    if lengths.min() < 1 or lengths.max() > S:
        raise CalibrationError("%s holds lengths from %d to %d; each must be 1 to %d"
                               % (what, lengths.min(), lengths.max(), S))
    return (np.arange(S)[None, :] < lengths[:, None]).astype(np.float64)


def quantize_file(model_path, rows_path, out_path, batch_size=16, lengths_path=None,
                  progress=None):
    """Quantize the float model at model_path with the rows of rows_path (and the lengths of
    lengths_path), batch_size samples at a time; write the int8 file to out_path. Returns
    (specs, arrays, the file's size in bytes)."""
    config, params = read_float_model(model_path)
    return quantize_to_file(config, params, rows_path, out_path, batch_size, lengths_path,
                            progress)


def quantize_to_file(config, params, rows_path, out_path, batch_size=16, lengths_path=None,
                     progress=None):
    """quantize_file's work for a float model given as (config, params)."""
    width, rows, _ = device_module("nn/flow").follow(config)
    x = check_rows(read_array(rows_path, "calibration rows"), width, rows,
                   "the calibration file %s" % rows_path)
    mask = None
    if lengths_path is not None:
        mask = mask_of(read_array(lengths_path, "sequence lengths"), len(x) // rows, config,
                       "the lengths file %s" % lengths_path)
    params = {k: np.asarray(v, np.float32).astype(np.float64) for k, v in params.items()}
    specs, arrays = quantize(config, params, x, mask, rows, batch_size, progress)
    data = model_bytes(specs, arrays)
    _write_atomically(out_path, data)
    return specs, arrays, len(data)


def _write_atomically(path, data):
    """data at path, which shows the old file or the whole new one, never a part."""
    import os

    tmp = "%s.tmp" % path
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
