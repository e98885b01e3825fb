"""Quantize a float model with calibration rows from a .npy file or from an array
(tests/device/test_calibrate_npy.py runs it as deployed):

    micropython calibrate_npy.py MODEL_FILE npy ROWS.npy OUT_FILE
    micropython calibrate_npy.py MODEL_FILE array ROWS.f32 ROWS COLS OUT_FILE

`npy`: quantize(model, path, batch_size=16) once to import what it uses, then again, that
int8 model let go, then a third saved to OUT_FILE; prints "kept N": the bytes the second
quantize left on the heap. `array`: the same rows, read whole from raw float32 bytes
(float32.from_bytes), quantized as an array.
"""

import gc
import sys

from tinyattn import load
from tinyattn.int8 import quantize

model = load(sys.argv[1])
if sys.argv[2] == "npy":
    quantize(model, sys.argv[3], batch_size=16)  # what it uses imported
    gc.collect()
    base = gc.mem_alloc()
    q = quantize(model, sys.argv[3], batch_size=16)
    q = None
    gc.collect()
    kept = gc.mem_alloc() - base
    quantize(model, sys.argv[3], batch_size=16).save(sys.argv[4])
    print("kept", kept)
else:
    from tinyattn.float32 import from_bytes

    with open(sys.argv[3], "rb") as f:
        x = from_bytes((int(sys.argv[4]), int(sys.argv[5])), f.read)
    quantize(model, x, batch_size=16).save(sys.argv[6])
