"""Separate key and value (PyTorch's query, key, value) in the reference: against
nn.MultiheadAttention written out in PyTorch's layout (tests/torch_layout.py), the gradient
of each distinct input by central finite differences, and the old kv= unchanged."""

import numpy as np
import pytest

from checks import numeric_grad, rel
from torch_layout import multihead_attention
from tinyattn_host.reference.attention import (attention_backward, attention_forward,
                                               input_grads)

RNG = np.random.default_rng(2123)
E, H, S, S_KV, B = 6, 2, 4, 3, 2


def params(rng=RNG):
    p = {n: rng.standard_normal((E, E)) * 0.5 for n in ("Wq", "Wk", "Wv", "Wo")}
    p.update({n: rng.standard_normal(E) * 0.3 for n in ("bq", "bk", "bv", "bo")})
    return p


def test_key_and_value_are_pytorchs_key_and_value():
    p = params()
    x = RNG.standard_normal((B * S, E))
    key, value = RNG.standard_normal((B * S_KV, E)), RNG.standard_normal((B * S_KV, E))
    pad = np.array([[False, False, True], [False, False, False]])  # True: key ignored
    want = multihead_attention(
        x.reshape(B, S, E), key.reshape(B, S_KV, E), value.reshape(B, S_KV, E),
        np.concatenate([p["Wq"], p["Wk"], p["Wv"]]), np.concatenate([p["bq"], p["bk"], p["bv"]]),
        p["Wo"], p["bo"], H, pad)
    y, _ = attention_forward(x, p, H, S, mask=1.0 - pad, key=key, value=value)
    assert np.allclose(y, want.reshape(B * S, E), rtol=1e-12, atol=1e-12)
    # value is not key: swapping them changes the answer (V really comes from value)
    swapped, _ = attention_forward(x, p, H, S, mask=1.0 - pad, key=value, value=key)
    assert not np.allclose(swapped, y, atol=1e-3)


@pytest.mark.parametrize("case", ["key and value", "key is x", "value is key", "kv"])
def test_each_distinct_input_gets_its_gradient(case):
    p = params()
    x = RNG.standard_normal((B * S, E))
    other = RNG.standard_normal((B * S, E)), RNG.standard_normal((B * S, E))
    kw, inputs = {
        "key and value": ({"key": other[0], "value": other[1]}, [x, other[0], other[1]]),
        "key is x": ({"key": x, "value": other[1]}, [x, other[1]]),
        "value is key": ({"key": other[0], "value": other[0]}, [x, other[0]]),
        "kv": ({"kv": other[0]}, [x, other[0]]),
    }[case]
    G = RNG.standard_normal((B * S, E))
    _, cache = attention_forward(x, p, H, S, causal=True, **kw)
    g = attention_backward(G, p, cache)
    assert len(input_grads(g)) == len(inputs)
    loss = lambda: np.sum(attention_forward(x, p, H, S, causal=True, **kw)[0] * G)
    for got, a in zip(input_grads(g), inputs):
        assert rel(got, numeric_grad(loss, a)) < 1e-6
    assert (g["dkv"] is not None) == (case in ("kv", "value is key"))


def test_kv_is_key_and_value_from_one_source():
    p = params()
    x, kv = RNG.standard_normal((B * S, E)), RNG.standard_normal((B * S_KV, E))
    G = RNG.standard_normal((B * S, E))
    y1, c1 = attention_forward(x, p, H, S, kv=kv)
    y2, c2 = attention_forward(x, p, H, S, key=kv, value=kv)
    assert np.array_equal(y1, y2)
    g1, g2 = attention_backward(G, p, c1), attention_backward(G, p, c2)
    assert np.array_equal(g1["dkv"], g2["dkv"]) and np.array_equal(g1["dx"], g2["dx"])


@pytest.mark.parametrize("kw, words", [
    ({"kv": "K", "key": "K"}, "not both"), ({"value": "V"}, "value= needs key="),
    ({"key": "K", "value": "short"}, "value must have the key's shape"),
])
def test_bad_sources_are_refused(kw, words):
    p = params()
    x = RNG.standard_normal((B * S, E))
    arrays = {"K": RNG.standard_normal((B * S_KV, E)), "V": RNG.standard_normal((B * S_KV, E)),
              "short": RNG.standard_normal((B * S_KV - 2, E))}
    with pytest.raises(ValueError, match=words):
        attention_forward(x, p, H, S, **{k: arrays[v] for k, v in kw.items()})
