"""Issue 34's sensor model (20 frames of 6 features, Dense 6 -> 24, a learned positional
embedding, 3 x TransformerEncoderLayer(24, 3, 96), the mean over the frames, Dense 24 -> 4),
its files and what it holds (tests/device/test_sensor_heap.py runs it as deployed, .mpy, at a
given -X heapsize=):

    micropython sensor_model.py --save FLOAT_FILE [INT8_FILE] the model (seed 34) and its
                                                               int8 form (64 random rows)
    micropython sensor_model.py --save-wide FILE              one Dense(200, 200): a 160 KB
                                                               array (the one-copy load test)
    micropython sensor_model.py FILE float|int8 load|run       load it (and run one sample)

prints "held N": the bytes the loaded model holds after gc.collect (after the sample ran,
for run), every module its load imports included (the sample is made before the count,
with ulab alone).
"""

import gc
import sys

SEQ_LEN, FEATURES, EMBED_DIM, HEADS, FEEDFORWARD, CLASSES = 20, 6, 24, 3, 96, 4
CONFIG = [["Tokens", SEQ_LEN], ["Dense", FEATURES, EMBED_DIM, True],
          ["PositionalEmbedding", SEQ_LEN, EMBED_DIM]] + [
    ["TransformerEncoderLayer", EMBED_DIM, HEADS, FEEDFORWARD, 0.0, "relu", False, 1e-5,
     SEQ_LEN, False] for _ in range(3)] + [
    ["GlobalAvgPool", SEQ_LEN], ["Dense", EMBED_DIM, CLASSES, True]]


def sample(rows):
    from tinyattn.rng import Rng

    return Rng(7).uniform_matrix(rows, SEQ_LEN * FEATURES, -1.0, 1.0)


def one_sample():
    """One sample's row, made with ulab alone (importing nothing of tinyattn)."""
    from ulab import numpy as np

    return np.array([[(i * 37 % 200 - 100) / 100.0 for i in range(SEQ_LEN * FEATURES)]])


if sys.argv[1] == "--save":
    from tinyattn import save
    from tinyattn.int8 import quantize
    from tinyattn.nn.sequential import Sequential

    model = Sequential.from_config(CONFIG, seed=34)
    save(model, sys.argv[2])
    if len(sys.argv) > 3:
        quantize(model, sample(64)).save(sys.argv[3])
    sys.exit(0)

if sys.argv[1] == "--save-wide":
    from tinyattn import save
    from tinyattn.nn.sequential import Sequential

    save(Sequential.from_config([["Dense", 200, 200, True]], seed=34), sys.argv[2])
    sys.exit(0)

path, kind, what = sys.argv[1:4]
x = one_sample()  # made before the count in both cases (the wide model is only loaded)
gc.collect()
base = gc.mem_alloc()
if kind == "int8":
    from tinyattn.int8 import load
else:
    from tinyattn import load
model = load(path)
if what == "run":
    print("output", model.forward(x).shape)
gc.collect()
print("held", gc.mem_alloc() - base)
