"""Call the Iris model's float or int8 forward at batch 1 N times, for counting instructions
per call under valgrind (docs/quantization.md, *Speed*): the count of N calls less the count
of 0 calls, over N.

    micropython iris_calls.py float|int8 N
"""

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
