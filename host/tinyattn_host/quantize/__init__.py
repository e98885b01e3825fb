"""The int8 quantizer on the host (NumPy): the file a board's `tinyattn.int8.quantize(model,
rows).save(path)` writes, made on the PC (`python -m tinyattn_host quantize`).

    numbers.py    the int8 formats: scales, rounding, multipliers (the device's fixed_point)
    layers.py     one layer's int8 form: Dense, Activation, LayerNorm, positional, attention
    encoder.py    a TransformerEncoderLayer's statistics and int8 form
    calibrate.py  max |.| of every layer over the calibration rows, a batch at a time
    model.py      a Sequential's int8 specs and arrays, its scales, its file's bytes
    files.py      a float model file and a .npy of rows to an int8 model file
    command.py    the quantize command
"""

from .model import file_bytes, in_scale, model_bytes, out_scale, quantize  # noqa: F401
from .numbers import max_abs, quantize_tensor, scale_for  # noqa: F401
