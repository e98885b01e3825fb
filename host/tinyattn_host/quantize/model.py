"""tinyattn.int8.quantize on the host: a float Sequential (config, params "<i>.<name>") and its
calibration rows to the int8 model (layer specs and arrays "<i>.<name>") and its file, the file
the board's own `quantize(model, rows).save(path)` writes (kind "quantized")."""

import os
import tempfile

import numpy as np

from .. import modelfile
from ..device_modules import device_module
from ..reference.kinds import kind as declared, quantizer
from .calibrate import calibrate, layer_params
from .numbers import scale_for

CANONICAL = device_module("canonical_json")


def quantize_layer(spec, p, stats, s_x, s_y, prefix):
    """int8/convert.py's _quantize_layer: the quantize its kind's declaration names
    (reference/*.py's quantize=, quantize/kinds.py). A language model's kinds have no int8
    layer of a Sequential (int8_as None): quantize_lm (lm.py) quantizes them."""
    declaration = declared(spec[0])
    if declaration.quantize is None or declaration.int8_as is None:
        raise ValueError("no int8 form for a %s layer" % (spec[0],))
    return quantizer(declaration.quantize)(spec, p, stats, s_x, s_y, prefix)


def quantize(config, params, calib, mask=None, rows=1, batch_size=None, progress=None):
    """tinyattn.int8.quantize of the float Sequential (config, params "<i>.<name>") with
    calibration rows calib (samples of `rows` rows, and their padding mask), batch_size
    samples at a time: (specs, arrays named "<i>.<name>")."""
    stats = calibrate(config, params, calib, mask, rows, batch_size, progress)
    for i, st in enumerate(stats):
        if not np.isfinite(_values(st)).all():
            raise ValueError("layer %d (%s) gives NaN or infinity on the calibration rows: its "
                             "weights, or the rows, are too large to quantize" % (i, config[i][0]))
    specs, arrays = [], {}
    s_x = scale_for(stats[0]["in"])
    for i, (spec, st) in enumerate(zip(config, stats)):
        s_y = None if i == len(config) - 1 else scale_for(st["out"])
        made = quantize_layer(spec, layer_params(params, i), st, s_x, s_y, "%d." % i)
        specs.append(made[0])
        arrays.update(made[1])
        s_x = out_scale(made[0])
    return specs, arrays


def _values(stats):
    """Every number of a layer's statistics (a dict of floats and of such dicts)."""
    return [v for value in stats.values()
            for v in (_values(value) if isinstance(value, dict) else [value])]


def out_scale(spec):
    """The scale of a layer's output (its out_scale()): its kind's declaration says
    (reference/kinds.py)."""
    return declared(spec["kind"]).out_scale(spec)


def in_scale(specs):
    """The model's input scale (QSequential.in_scale) of its layer specs: the first layer's."""
    return declared(specs[0]["kind"]).in_scale(specs[0])


def file_bytes(kind, meta, arrays):
    """A model file (the device's store format): its kind, JSON meta and named arrays."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.bin")
        modelfile.write_model(path, kind, meta, arrays)
        with open(path, "rb") as f:
            return f.read()


def model_bytes(specs, arrays):
    """The int8 model as tinyattn.int8.load reads it: QSequential.save's file, its
    description in canonical JSON (device/tinyattn/canonical_json.py), byte for byte."""
    return file_bytes(modelfile.QUANTIZED, CANONICAL.dumps({"layers": specs}), arrays)
