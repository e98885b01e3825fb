"""The int8 path (was tinyattn.quant): quantize a trained float model, load a saved int8 one.

Each function imports its module on first call, so `import tinyattn.int8` costs nothing more."""


def quantize(model, calibration_x, seq_len=None, batch_size=16, mask=None):
    """The int8 QSequential of a trained float model, scales from running calibration_x
    batch_size samples at a time (and its padding mask) (int8/convert.py)."""
    from .convert import quantize

    return quantize(model, calibration_x, seq_len, batch_size, mask)


def load(path):
    """The int8 model saved at `path` by QSequential.save (int8/model_load.py)."""
    from .model_load import load

    return load(path)
