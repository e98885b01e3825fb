"""E=8, S=4, B=16 (the Iris shape): forward and backward inside a 128 KB heap, as on a small
board (tests/device/test_attention_api.py runs it with heap="128k" on the unix port), giving
the reference's numbers, and leaving the heap as it found it. One fixture at a time: the
stand-in's arrays take twelve times the memory of ulab's."""

import check
from tinyattn import Attention


def layer():
    a = Attention(8, 2, seed=1)
    params = check.fixture("params")
    for name, param, grad in a.collect_params():
        param[:] = params[name]
    return a


def test_forward_backward_match_the_reference():
    a = layer()
    y = a.forward(check.fixture("x")["x"], 4, training=True)
    dx = a.backward(check.fixture("G")["G"])  # the caches go before the comparisons
    check.rel_error_below(y, check.fixture("y")["y"], 1e-4, what="y")
    y = None
    check.rel_error_below(dx, check.fixture("dx")["dx"], 1e-4, what="dx")
    dx = None
    want = check.fixture("grads")
    for name, param, grad in a.collect_params():
        scale = want["dbq"] if name == "bk" else None  # dbk is exactly 0: see case_attention
        check.rel_error_below(grad, want["d" + name], 1e-4, scale=scale, what="d" + name)


def test_forward_backward_returns_the_heap_to_its_baseline():
    a = layer()
    x, G = check.fixture("x")["x"], check.fixture("G")["G"]

    def step():
        a.forward(x, 4, training=True)
        a.backward(G)

    check.heap_returns(step, 6, 64, "forward + backward in a 128 KB heap")
