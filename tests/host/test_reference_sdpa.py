"""The NumPy reference of scaled_dot_product_attention against ONNX's reference on ONNX's own
Attention node cases, against PyTorch (forward and autograd) on random cases, both from
tests/fixtures/sdpa/ (tests/fixtures/make_sdpa_fixtures.py), and against finite differences."""

import json
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host.reference.sdpa import (scaled_dot_product_attention, sdpa_backward,
                                          sdpa_forward)

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sdpa"


def load(kind):
    """[(name, args, {array name: array})] of fixture file `kind` ("onnx", "torch")."""
    index = json.loads((FIXTURES / (kind + ".json")).read_text())
    with np.load(FIXTURES / (kind + ".npz")) as data:
        return [(c["name"], c["args"], {a: data["%s.%s" % (c["name"], a)] for a in c["arrays"]})
                for c in index["cases"]], index


ONNX, ONNX_INDEX = load("onnx")
TORCH, _ = load("torch")
INPUTS = ("mask", "keep", "bias")


def call(args, a):
    return scaled_dot_product_attention(a["q"], a["k"], a["v"], **args,
                                        **{n: a[n] for n in INPUTS if n in a})


def test_onnx_cases_cover_the_issue():
    """Every feature the issue names has an ONNX case that fits; every skip says why."""
    names = [name for name, _, _ in ONNX]
    assert len(names) >= 60
    args = [a for _, a, _ in ONNX]
    arrays = [a for _, _, a in ONNX]
    assert any(a["num_heads"] == 9 and a["num_kv_heads"] == 3 for a in args)  # GQA 9/3
    assert any("bias" in a for a in arrays) and any("keep" in a for a in arrays)
    assert any("bias" in x and x["bias"].shape[0] > a["seq_len"]  # per block: a 4-D float mask
               for a, x in zip(args, arrays))
    assert any(a["causal"] and a["causal_offset"] > 0 for a in args)  # past + causal
    assert any(a["scale"] is not None for a in args) and any(a["softcap"] for a in args)
    assert any(x["v"].shape[1] != x["k"].shape[1] for x in arrays)  # another value size
    assert any(a["kv_len"] != a["seq_len"] for a in args)
    for name, why in ONNX_INDEX["skipped"].items():
        assert why and name.startswith("test_attention"), name


@pytest.mark.parametrize("name,args,a", ONNX, ids=[c[0] for c in ONNX])
def test_reference_equals_onnx(name, args, a):
    """float64 against ONNX's float32 reference: within float32's rounding."""
    got = call(args, a)
    assert got.shape == a["y"].shape
    assert np.max(np.abs(got - a["y"])) <= 1e-5 * max(np.max(np.abs(a["y"])), 1e-30), name


@pytest.mark.parametrize("name,args,a", TORCH, ids=[c[0] for c in TORCH])
def test_reference_equals_torch(name, args, a):
    """Forward and every gradient against torch (float64) within 1e-9 relative."""
    y, cache = sdpa_forward(a["q"], a["k"], a["v"], **args, **{n: a[n] for n in INPUTS if n in a})
    grads = dict(zip(("dq", "dk", "dv", "dbias"), sdpa_backward(a["grad_out"], cache)))
    pairs = [(y, a["y"])] + [(grads[n], a[n]) for n in ("dq", "dk", "dv", "dbias") if n in a]
    assert (grads["dbias"] is None) == ("dbias" not in a)
    for got, want in pairs:
        assert np.linalg.norm(got - want) <= 1e-9 * np.linalg.norm(want), name


def random_case(rng, B, S, S_kv, H, H_kv, D, Dv):
    return (rng.standard_normal((B * S, H * D)), rng.standard_normal((B * S_kv, H_kv * D)),
            rng.standard_normal((B * S_kv, H_kv * Dv)))


@pytest.mark.parametrize("options", [
    dict(bias="shared", softcap=2.0),
    dict(bias="blocks", causal=True, causal_offset=-1, mask=[[1, 1, 0, 1, 1], [0, 1, 1, 1, 0]]),
    dict(keep=True, scale=0.3, softcap=0.5),
], ids=["shared-softcap", "blocks-empty-rows", "keep-scale"])
def test_backward_is_finite_differences(options):
    """dq, dk, dv, dbias against central differences (1e-6 relative), GQA 6/2, rows with no
    key among them."""
    rng = np.random.default_rng(3)
    B, S, S_kv, H, H_kv, D, Dv = 2, 3, 5, 6, 2, 2, 3
    q, k, v = random_case(rng, B, S, S_kv, H, H_kv, D, Dv)
    kw = dict(options)
    kw["bias"] = {"shared": rng.standard_normal((S, S_kv)), None: None,
                  "blocks": rng.standard_normal((B * H * S, S_kv))}[kw.get("bias")]
    if kw.get("keep"):
        kw["keep"] = (rng.random((S, S_kv)) < 0.6) * 1.0
    G = rng.standard_normal((B * S, H * Dv))
    inputs = [q, k, v, kw.pop("bias")]

    def loss():
        y = scaled_dot_product_attention(*inputs[:3], S, H, S_kv, H_kv, bias=inputs[3], **kw)
        return float(np.sum(y * G))

    _, cache = sdpa_forward(*inputs[:3], S, H, S_kv, H_kv, bias=inputs[3], **kw)
    grads = sdpa_backward(G, cache)
    for a, grad in zip(inputs, grads):
        if a is None:
            assert grad is None
            continue
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + 1e-6
            plus = loss()
            a[idx] = old - 1e-6
            num[idx] = (plus - loss()) / 2e-6
            a[idx] = old
        assert np.linalg.norm(grad - num) <= 1e-6 * np.linalg.norm(num)


def test_a_row_with_no_key_is_zero():
    """ONNX's rule: zeros where every key is masked (causal offset -2: rows 0 and 1)."""
    rng = np.random.default_rng(4)
    q, k, v = random_case(rng, 1, 4, 4, 2, 1, 3, 3)
    y = scaled_dot_product_attention(q, k, v, 4, 2, num_kv_heads=1, causal=True,
                                     causal_offset=-2)
    assert np.all(y[:2] == 0) and np.all(np.abs(y[2:]) > 0)
    uniform, _ = sdpa_forward(q, k, v, 4, 2, num_kv_heads=1, causal=True, causal_offset=-2,
                              empty_rows="uniform")
    assert np.allclose(uniform[:2], np.tile(v.mean(axis=0), (2, 2)))


def test_gqa_is_repeated_heads():
    """H_kv = 1 equals the same heads written out H times (head h reads h // (H / H_kv))."""
    rng = np.random.default_rng(5)
    q, k, v = random_case(rng, 2, 3, 4, 4, 2, 2, 3)
    k4 = np.concatenate([k[:, 0:2], k[:, 0:2], k[:, 2:4], k[:, 2:4]], axis=1)
    v4 = np.concatenate([v[:, 0:3], v[:, 0:3], v[:, 3:6], v[:, 3:6]], axis=1)
    assert np.allclose(scaled_dot_product_attention(q, k, v, 3, 4, num_kv_heads=2),
                       scaled_dot_product_attention(q, k4, v4, 3, 4))


def test_a_gqa_attention_layer_is_finite_differences():
    """The Attention layer's reference with num_kv_heads (Wk, Wv (H_kv*D, E)) on the sdpa
    reference: every gradient against central differences (1e-6), padding and causal."""
    from tinyattn_host.reference import attention_backward, attention_forward

    rng = np.random.default_rng(6)
    E, H, H_kv, B, S = 8, 4, 2, 2, 3
    p = {n: rng.standard_normal((4 if n in ("Wk", "Wv") else E, E)) / 3 for n in
         ("Wq", "Wk", "Wv", "Wo")}
    p.update({n: 0.1 * rng.standard_normal(4 if n in ("bk", "bv") else E)
              for n in ("bq", "bk", "bv", "bo")})
    x, G = rng.standard_normal((B * S, E)), rng.standard_normal((B * S, E))
    kw = dict(mask=np.array([[1, 1, 0], [1, 1, 1.0]]), causal=True, num_kv_heads=H_kv)

    def loss():
        return float(np.sum(attention_forward(x, p, H, S, **kw)[0] * G))

    _, cache = attention_forward(x, p, H, S, **kw)
    g = attention_backward(G, p, cache)
    for name, a in [("dx", x)] + [("d" + n, p[n]) for n in p]:
        num = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + 1e-6
            plus = loss()
            a[idx] = old - 1e-6
            num[idx] = (plus - loss()) / 2e-6
            a[idx] = old
        scale = np.linalg.norm(num) if name != "dbk" else np.linalg.norm(g["dbq"])
        assert np.linalg.norm(g[name] - num) <= 1e-6 * scale, name
