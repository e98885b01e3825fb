"""Grouped-query attention in the layers (tests/device/test_gqa.py writes the reference's
numbers): Attention(64, 8, num_kv_heads=2) forward and backward, a GQA encoder's training
step in a Sequential, a GQA Stream (its cache a quarter of the num_kv_heads=8 one)."""

import gc

import check
from tinyattn import Attention, Sequential
from tinyattn.nn.stream import Stream
from ulab import numpy as np

TOL, SELF_TOL = 1e-4, 1e-5
# dbk is exactly 0 (a constant added to every score of a row leaves the softmax as it is):
# float32 leaves ~1e-8 there, measured on the scale of dbq (as case_attention does)


def model_of(f):
    m = Sequential.from_config(f["config"], seed=2)
    for name, p, _ in m.collect_params():
        p[:] = f[name]
    return m


def test_attention_64_8_with_2_kv_heads_runs_and_trains():
    f = check.fixture("attention")
    layer = Attention(64, 8, num_kv_heads=2, seed=1)
    check.equal(layer.Wk.shape, (16, 64), "Wk (H_kv * D, E)")
    check.equal(layer.num_params(), 2 * 64 * 80 + 2 * 80, "parameters")
    for name, p, _ in layer.collect_params():
        p[:] = f[name]
    y = layer.forward(f["x"], 6, mask=f["mask"], causal=True, training=True)
    dx = layer.backward(f["G"])
    check.close(y, f["want_y"], rtol=1e-5, what="y")
    check.rel_error_below(dx, f["want_dx"], TOL, what="dx")
    for name, _, grad in layer.collect_params():
        check.rel_error_below(grad, f["want_d" + name], TOL, what="d" + name,
                              scale=f["want_dbq"] if name == "bk" else None)
    check.close(layer.forward(f["x"], 6, mask=f["mask"], causal=True), f["want_y"], rtol=1e-5,
                what="inference")


def test_a_gqa_encoder_trains_in_a_sequential():
    f = check.fixture("encoder")
    m = model_of(f)
    m.zero_grad()
    y = m.forward(f["x"], True)
    dx = m.backward(f["G"])
    check.rel_error_below(y, f["y"], TOL, what="logits")
    check.rel_error_below(dx, f["dx"], TOL, what="dx")
    for name, _, grad in m.collect_params():
        check.rel_error_below(grad, f["d" + name], TOL, what="d" + name,
                              scale=f[("d" + name).replace(".bk", ".bq")] if name.endswith(".bk")
                              else None)
    check.equal(Sequential.from_config(m.config()).config(), f["config"], "config round trip")


def test_a_gqa_stream_is_the_full_causal_forward():
    f = check.fixture("stream")
    m = model_of(f)
    x = f["x"]
    W = x.shape[0]
    s = Stream(m, W)
    full = m.forward(x)
    for t in range(W):
        y = s.step(x[t:t + 1, :])
        check.rel_error_below(y, f["want"][t:t + 1, :], TOL, what="token %d" % t)
        check.rel_error_below(y, full[t:t + 1, :], SELF_TOL, what="token %d, full" % t)


def test_the_stream_cache_is_a_quarter_of_the_8_kv_heads_one():
    """Bytes of the cache arrays (cache_bytes reads their sizes), and the heap a Stream takes."""
    import ulab

    f = check.fixture("stream")
    config = [list(spec) for spec in f["config"]]
    sizes = {}
    for kv_heads in (8, 2):
        config[-1][-1] = kv_heads
        m = Sequential.from_config(config, seed=1)
        gc.collect()
        before = gc.mem_alloc()
        s = Stream(m, 64)
        gc.collect()
        grown = gc.mem_alloc() - before
        sizes[kv_heads] = s.cache_bytes()
        check.equal(sizes[kv_heads], 2 * 64 * 8 * kv_heads * np.zeros(1).itemsize,
                    "K and V of 64 tokens, %d heads of 8" % kv_heads)
        print("stream H_kv=%d W=64: cache %d bytes, the Stream %d bytes"
              % (kv_heads, sizes[kv_heads], grown))
        if ulab.__version__ != "stand-in":
            assert sizes[kv_heads] <= grown <= sizes[kv_heads] + 2048, (grown, sizes[kv_heads])
        m = s = None
    check.equal(sizes[2] * 4, sizes[8], "the H_kv = 2 cache is a quarter")
