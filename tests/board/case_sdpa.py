"""tinyattn.scaled_dot_product_attention against ONNX's reference on ONNX's own Attention node
cases (tests/device/test_sdpa.py writes them: onnxNN.txt the call's arguments and the arrays'
names and shapes, onnxNN.f32 the arrays, float32)."""

import array

import check
from tinyattn import scaled_dot_product_attention
from ulab import numpy as np

ARGUMENTS = ("mask", "keep", "bias")


def read_arrays(name, fx):
    """{array name: ulab array} of fixture `name`, read from name.f32 one array at a time."""
    out = {}
    with open(check.path(name + ".f32"), "rb") as f:
        for key, shape in fx["arrays"]:
            n = shape[0] * (shape[1] if len(shape) > 1 else 1)
            buf = array.array("f", bytes(4 * n))
            if f.readinto(buf) != 4 * n:
                raise AssertionError("%s: the arrays end early" % name)
            out[key] = np.array(buf).reshape(tuple(shape))
            buf = None
    return out


def call(a, args):
    """The device function on fixture arrays `a` with the case's arguments."""
    named = dict(args)
    for key in ARGUMENTS:
        if key in a:
            named[key] = a[key]
    return scaled_dot_product_attention(a["q"], a["k"], a["v"], **named)


def run_onnx_case(name):
    fx = check.fixture(name)
    a = read_arrays(name, fx)
    y = call(a, fx["args"])
    check.close(y, a["y"], rtol=1e-5, what=fx["case"])


def test_equals_onnx_on_every_case():
    check.every(run_onnx_case, check.names("onnx"))


def test_allocates_its_output_and_one_block_at_a_time():
    """Forward calls hold no heap after they return (a leak grows it every call)."""
    name = check.names("onnx")[0]
    fx = check.fixture(name)
    a = read_arrays(name, fx)
    check.heap_returns(lambda: call(a, fx["args"]), what="scaled_dot_product_attention")
