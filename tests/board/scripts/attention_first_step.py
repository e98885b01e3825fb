"""A fresh Attention(64, 4)'s first training step by hand, as deployed at a given -X heapsize=
(tests/device/test_first_step_heap.py):

    micropython attention_first_step.py S plain|zero_grad

forward(x, S, training=True) of one sequence of S tokens, then backward; zero_grad first
(what an optimizer does) or not. Prints "ok".
"""

import sys

from tinyattn.nn.attention import Attention
from tinyattn.rng import Rng

S = int(sys.argv[1])
layer = Attention(64, 4, seed=1)
if sys.argv[2] == "zero_grad":
    layer.zero_grad()
x = Rng(3).uniform_matrix(S, 64, -1.0, 1.0)
layer.backward(layer.forward(x, S, training=True))
print("ok")
