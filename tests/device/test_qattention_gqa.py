"""The int8 attention layer with grouped K/V heads (tests/board/case_qattention_gqa.py): the
int8 form of Attention(64, 8, num_kv_heads=2), quantized on the host (tinyattn_host.quantize, its Wk
and Wv of 16 rows), loaded by the device and run bit for bit against the integer reference
(Q, K, V, scores, probabilities, context, output; plain, causal, padding mask), its float
forward within the int8 tolerance of the float layer (written here in NumPy), and the
device's conversion (attention_convert.SelfAttention.from_float) of the same float weights
against the host's description;
then a causal encoder of 4 heads streamed (QStream) with H_kv = 4, 2 and 1 K/V heads against
the reference stream, its cache's K and V bytes H_kv / H of the full ones.
"""

from functools import lru_cache

import numpy as np

from board_cases import board_test
from int8_board_files import robust_input
from stream_models import PER_TOKEN, T, W, frames, int8_model
from test_attend_gqa import INT8_TOLERANCE, sdpa_float
from tinyattn_host.quantize import max_abs, model_bytes, quantize_tensor, scale_for
from tinyattn_host.quantize.layers import attention, projection_stats
from tinyattn_host.reference.int8_stream import Int8Stream
from tinyattn_host.reference.sequential import int8_layers

E, H, H_KV, S, B = 64, 8, 2, 12, 3
D = E // H


def float_params(rng):
    """Attention(64, 8, num_kv_heads=2)'s parameters: Wk, Wv (H_kv D, E)."""
    p = {}
    for n, rows in (("q", E), ("k", H_KV * D), ("v", H_KV * D), ("o", E)):
        p["W" + n] = rng.normal(scale=E ** -0.5, size=(rows, E))
        p["b" + n] = rng.normal(scale=0.1, size=rows)
    return p


def float_forward(p, x, causal):
    q, k, v = (x @ p["W" + n].T + p["b" + n] for n in "qkv")
    ctx = sdpa_float(q, k, v, S, H, S, H_KV, None, causal, 0, 1 / np.sqrt(D))
    return ctx @ p["Wo"].T + p["bo"]


@lru_cache(maxsize=None)
def layer_case():
    """(spec, arrays, float params, x, xq, {causal: float output}) of the GQA layer."""
    rng = np.random.default_rng(3535)
    p = float_params(rng)
    x = rng.normal(size=(B * S, E))
    s_x = scale_for(max_abs(x))
    x = robust_input(x, s_x)  # a board's float32 quantizes it as the host does
    y = {c: float_forward(p, x, c) for c in (False, True)}
    s_y = scale_for(max(max_abs(v) for v in y.values()))
    stats = projection_stats(x, p)
    spec, arrays = attention(p, stats, H, S, s_x, s_y, "0.")
    return spec, arrays, p, stats, x, quantize_tensor(x, s_x).astype(np.int64), y


def reference_trace(spec, arrays, xq, causal, keep):
    from tinyattn_host.reference.int8_attend import attention

    layer = int8_layers([spec], arrays)[0]
    out = attention(xq, layer, S, mask=keep, causal=causal)
    return {k: np.asarray(out[k]).ravel().tolist() for k in
            ("Q", "K", "V", "scores", "probs", "ctx", "y")}


def test_the_layer_has_grouped_heads_and_its_int8_is_near_float():
    spec, arrays, _, _, x, xq, y = layer_case()
    assert spec["H_kv"] == 2 and arrays["0.Wk"].shape == (16, 64)
    for causal in (False, True):
        got = reference_trace(spec, arrays, xq, causal, None)["y"]
        got = np.array(got).reshape(B * S, E) * spec["scales"]["y"]
        err = np.abs(got - y[causal]).max() / np.abs(y[causal]).max()
        assert 0 < err <= INT8_TOLERANCE, (causal, err)


def gqa_copy(specs, arrays, layer, H_kv):
    """The int8 model with encoder layer `layer`'s attention reduced to its first H_kv K/V
    heads (rows of Wk, Wv, bk, bv): a grouped-query model with the same multipliers."""
    specs = [dict(s) for s in specs]
    enc = specs[layer] = dict(specs[layer], parts=dict(specs[layer]["parts"]))
    a = enc["parts"]["self_attn"] = dict(enc["parts"]["self_attn"])
    if H_kv != a["H"]:
        a["H_kv"] = H_kv
    rows = H_kv * (a["E"] // a["H"])
    arrays = dict(arrays)
    for n in ("Wk", "Wv", "bk", "bv"):
        name = "%d.self_attn.%s" % (layer, n)
        if name in arrays:
            arrays[name] = arrays[name][:rows]
    return specs, arrays


def stream_fixtures():
    rng = np.random.default_rng(3536)
    config = [list(spec) for spec in PER_TOKEN]
    config[2][2] = 4  # the encoder layer: E 8, 4 heads of 2
    specs, arrays, _, _ = int8_model(config, 6, T, rng)
    _, xq = frames(specs, T, rng)
    fixtures = {}
    for H_kv in (4, 2, 1):
        s, a = gqa_copy(specs, arrays, 2, H_kv)
        stream = Int8Stream(int8_layers(s, a), W)
        want = np.array([stream.step(xq[t])[0] for t in range(T)])
        fixtures["stream%d.bin" % H_kv] = model_bytes(s, a)
        fixtures["stream%d" % H_kv] = {"xq": xq.ravel().tolist(), "want": want.ravel().tolist(),
                                       "out": int(want.shape[1]), "W": W,
                                       "cache": 2 * W * 2 * H_kv + W}
    return fixtures


def make_fixtures():
    spec, arrays, p, stats, x, xq, y = layer_case()
    cases = []
    keep = (np.arange(S)[None, :] < np.array([S, 5, 1])[:, None]).astype(int)
    for causal, mask in ((False, None), (True, None), (False, keep)):
        cases.append(dict(reference_trace(spec, arrays, xq, causal, mask), causal=causal,
                          keep=None if mask is None else mask.ravel().tolist()))
    fixture = {"xq": xq.ravel().tolist(), "x": x, "cases": cases, "spec": spec,
               "stats": stats, "y_plain": y[False], "y_causal": y[True]}
    fixture.update({n: p[n] for n in p})
    fixtures = {"gqa.bin": model_bytes([spec], arrays), "layer": fixture}
    fixtures.update(stream_fixtures())
    return fixtures


test_qattention_gqa_on_board = board_test("case_qattention_gqa", make_fixtures)
