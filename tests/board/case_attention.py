"""The device Attention layer against the NumPy reference on 64 configurations
(tests/device/test_attention.py writes them, half of them a run).

Fixture cfgNN: the configuration (its id names it in every message), the padding mask, the
names and shapes of the expected arrays; cfgNN.f32 holds those arrays (float32, in order);
cfgNN.keep the dropout keep-mask the host predicts from the layer's seed. The inputs are not
sent: both sides draw them from Rng(1000 + seed) (see `grid`), exactly, on every port.
"""

import array

import check
from tinyattn import Attention
from tinyattn.rng import Rng
from tinyattn.int8.scales import max_abs
from ulab import numpy as np

PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")


def grid(rng, rows, cols, shift):
    """(rows, cols) of ((next32() >> 20) - 2048) / 2^shift, row by row: float32-exact numbers
    in [-2048, 2048) / 2^shift that tests/device/test_attention.py draws the same."""
    scale = 1.0 / (1 << shift)
    out = np.zeros((rows, cols))
    row = [0.0] * cols
    for i in range(rows):
        for j in range(cols):
            row[j] = ((rng.next32() >> 20) - 2048) * scale
        out[i, :] = np.array(row)
    return out


def make_inputs(c):
    """x, G, the parameters and kv, drawn in the host's order."""
    E, rows, shifts = c["E"], c["B"] * c["S"], c["shifts"]
    rng = Rng(1000 + c["seed"])
    inputs = {"x": grid(rng, rows, E, shifts["x"]), "G": grid(rng, rows, E, shifts["x"])}
    for name in PARAMS:
        if name[0] == "W":
            inputs[name] = grid(rng, E, E, shifts["W"])
        elif c["bias"]:
            inputs[name] = grid(rng, 1, E, shifts["b"]).reshape((E,))
    if c["S_kv"] != c["S"]:
        inputs["kv"] = grid(rng, c["B"] * c["S_kv"], E, shifts["x"])
    return inputs


def float32s(f, shape):
    """The next array of `shape` from the open float32 file f."""
    n = 1
    for d in shape:
        n *= d
    buf = array.array("f", bytes(4 * n))
    if f.readinto(buf) != 4 * n:
        raise AssertionError("the expected arrays end early")
    out = np.array(buf)
    buf = None
    return out.reshape(tuple(shape)) if len(shape) > 1 else out


def run_config(name):
    fx = check.fixture(name)
    c = fx["config"]
    what = c["id"]
    inputs = make_inputs(c)
    layer = Attention(c["E"], c["H"], use_bias=c["bias"], dropout=c["dropout"],
                      checkpoint=c["checkpoint"], seed=c["seed"])
    for pname, param, grad in layer.collect_params():
        param[:] = inputs[pname]
    kv = inputs.get("kv")
    y = layer.forward(inputs["x"], c["S"], mask=fx.get("mask"), causal=c["causal"], kv=kv,
                      kv_len=c["S_kv"] if kv is not None else None, training=True)
    grads = layer.backward(inputs["G"])
    inputs = None
    got = {"y": y}
    if kv is not None:
        got["dx"], got["dkv"] = grads
    else:
        got["dx"] = grads
    for pname, param, grad in layer.collect_params():
        got["d" + pname] = grad
    if c["dropout"] > 0:
        keep = layer.keep_mask()
        rows = c["B"] * c["H"] * c["S"]
        check.equal(keep.shape, (rows, c["S_kv"]), "%s keep-mask shape" % what)
        with open(check.path(name + ".keep"), "rb") as f:
            check.equal(keep, f.read(), "%s keep-mask (0/1)" % what)
        keep = None
    check.equal(sorted(got), sorted(key for key, shape in fx["expected"]),
                "%s: the arrays to compare" % what)
    dbq = None
    with open(check.path(name + ".f32"), "rb") as f:  # y, dx, (dkv), dW*, (db*): one at a time
        for key, shape in fx["expected"]:
            want = float32s(f, shape)
            if key == "y":
                check.close(got[key], want, atol=1e-4 * max(1.0, max_abs(want)),
                            what="%s y" % what)
            else:
                # dbk is exactly 0 (adding a constant to every score of a row leaves the
                # softmax unchanged): float32 leaves ~1e-8 there, so measure it on the scale
                # of dbq (which comes before it).
                check.rel_error_below(got[key], want, 1e-4, scale=dbq if key == "dbk" else None,
                                      what="%s %s" % (what, key))
            if key == "dbq":
                dbq = want
            got[key] = want = None


def test_matches_the_reference_on_every_configuration():
    check.every(run_config, check.names("cfg"))
