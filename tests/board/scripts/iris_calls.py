"""Call the Iris model's float or int8 forward at batch 1 N times, for counting instructions
per call under valgrind (docs/quantization.md, *Speed*): the count of N calls less the count
of 0 calls, over N. With `bytes`, it then prints the bytes one call allocates (the mean of
10 calls with the collector off).

    micropython iris_calls.py float|int8 N [bytes]
"""

import gc
import sys

from tinyattn.datasets.dataset import load_iris
from tinyattn.int8 import quantize
from tinyattn.training import iris_model

train_set, test_set = load_iris().split(0.2, seed=42)
model = iris_model(42)
qmodel = quantize(model, train_set.X)
x = test_set.X[0:1, :]
call = model.forward if sys.argv[1] == "float" else qmodel.forward
call(x)
for _ in range(int(sys.argv[2])):
    call(x)
if sys.argv[3:] == ["bytes"]:
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    for _ in range(10):
        call(x)
    print("%s forward, batch 1: %d bytes a call" % (sys.argv[1], (gc.mem_alloc() - before) // 10))
