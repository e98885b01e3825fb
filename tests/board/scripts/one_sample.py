"""Load a model file and run one sample of it (tests/device/test_model_heap.py runs it as
deployed, .mpy, at a given -X heapsize=):

    micropython one_sample.py MODEL_FILE [trainable]

prints "params N" (how many numbers the weights hold), "inference N": the bytes the loaded model holds (weights only: a model that is only
run has no gradient buffers), after one sample ran; with `trainable`, the model's modules are
imported first (so N counts the model only), and it also prints "trainable N": the same
after collect_params() (what an optimizer takes) made its gradients.
`micropython one_sample.py --save-digits PATH` writes the digits model (seed 42) to PATH.
"""

import gc
import sys

from tinyattn import load, save
from tinyattn.nn.flow import follow
from tinyattn.rng import Rng



def one_sample(path):
    """The model loaded from `path`, and the shape of its output for one sample."""
    model = load(path)
    width, rows, _ = follow(model.config())
    y = model.forward(Rng(1).uniform_matrix(rows, width, -1.0, 1.0))
    return model, y.shape


if sys.argv[1] == "--save-digits":
    from tinyattn.datasets.digits import digits_model

    save(digits_model(42), sys.argv[2])
    sys.exit(0)
figures = sys.argv[2:] == ["trainable"]
if figures:  # a first load imports the modules: what the second holds is the model's
    one_sample(sys.argv[1])
gc.collect()
base = gc.mem_alloc()
model, shape = one_sample(sys.argv[1])
print("output", shape)
print("params", model.num_params())
gc.collect()
print("inference", gc.mem_alloc() - base)
if figures:
    model.collect_params()
    gc.collect()
    print("trainable", gc.mem_alloc() - base)
