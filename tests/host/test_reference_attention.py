"""The NumPy attention reference against finite differences, a per-block loop and hand math."""

import math

import numpy as np
import pytest

from checks import numeric_grad
from tinyattn_host.reference import attention_backward, attention_forward, padding_mask

STEP = 1e-6
TOL = 1e-6

# name -> sizes and options; lengths gives the padding mask (a 0 makes a fully masked row).
CASES = {
    "base": dict(B=3, S=4, E=8, H=2),
    "no_bias": dict(B=1, S=4, E=8, H=4, bias=False),
    "padding": dict(B=3, S=5, E=8, H=2, lengths=[5, 3, 2]),
    "fully_masked_row": dict(B=3, S=4, E=4, H=2, lengths=[4, 0, 2]),
    "causal": dict(B=2, S=5, E=8, H=2, causal=True),
    "cross": dict(B=3, S=3, S_kv=5, E=8, H=2, lengths=[5, 4, 2]),
    "cross_causal": dict(B=2, S=4, S_kv=3, E=4, H=1, causal=True),
    "dropout": dict(B=3, S=4, E=8, H=2, dropout=0.3),
    "single_head": dict(B=1, S=5, E=4, H=1),
    "everything": dict(B=3, S=3, S_kv=4, E=8, H=4, bias=False, lengths=[4, 0, 3],
                       causal=True, dropout=0.3),
}


def make_case(name, seed=0):
    """Random inputs for CASES[name]: (x, p, G, kwargs for attention_forward)."""
    c = CASES[name]
    B, S, E, H = c["B"], c["S"], c["E"], c["H"]
    S_kv = c.get("S_kv", S)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(B * S, E))
    p = {w: rng.normal(scale=0.5, size=(E, E)) for w in ("Wq", "Wk", "Wv", "Wo")}
    for b in ("bq", "bk", "bv", "bo"):
        p[b] = rng.normal(scale=0.2, size=E) if c.get("bias", True) else None
    kw = dict(num_heads=H, seq_len=S, causal=c.get("causal", False))
    if "S_kv" in c:
        kw["kv"] = rng.normal(size=(B * S_kv, E))
        kw["kv_len"] = S_kv
    if "lengths" in c:
        kw["mask"] = padding_mask(c["lengths"], S_kv)
    if c.get("dropout"):
        kw["dropout"] = c["dropout"]
        kw["keep"] = (rng.random((B * H * S, S_kv)) >= c["dropout"]).astype(np.float64)
    G = rng.normal(size=(B * S, E))
    return x, p, G, kw


def rel_err(analytic, numeric):
    return np.linalg.norm(analytic - numeric) / np.linalg.norm(numeric)


def per_block_forward(x, p, num_heads, seq_len, mask=None, causal=False, kv=None, kv_len=None,
                      keep=None, dropout=0.0):
    """The forward pass written as the device does it: a loop over blocks b*H + h on 2-D slices."""
    src = x if kv is None else kv
    S_kv = seq_len if kv is None else kv_len
    E = x.shape[1]
    H, S, D = num_heads, seq_len, E // num_heads
    B = x.shape[0] // S

    def lin(a, w, b):
        return a @ p[w].T + (0 if p[b] is None else p[b])

    Q, K, V = lin(x, "Wq", "bq"), lin(src, "Wk", "bk"), lin(src, "Wv", "bv")
    ctx = np.zeros_like(Q)
    for b in range(B):
        for h in range(H):
            q = Q[b * S:(b + 1) * S, h * D:(h + 1) * D]
            k = K[b * S_kv:(b + 1) * S_kv, h * D:(h + 1) * D]
            v = V[b * S_kv:(b + 1) * S_kv, h * D:(h + 1) * D]
            s = q @ k.T / math.sqrt(D)
            for i in range(S):
                for j in range(S_kv):
                    if (mask is not None and mask[b, j] == 0) or (causal and j > i):
                        s[i, j] = -1e9
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            if keep is not None:
                blk = b * H + h
                a = a * keep[blk * S:(blk + 1) * S] / (1 - dropout)
            ctx[b * S:(b + 1) * S, h * D:(h + 1) * D] = a @ v
    return lin(ctx, "Wo", "bo")


@pytest.mark.parametrize("name", CASES)
def test_backward_matches_finite_differences(name):
    x, p, G, kw = make_case(name)
    y, cache = attention_forward(x, p, **kw)
    grads = attention_backward(G, p, cache)

    def loss():
        return float(np.sum(attention_forward(x, p, **kw)[0] * G))

    checked = {"dx": x}
    if "kv" in kw:
        checked["dkv"] = kw["kv"]
        assert grads["dkv"].shape == kw["kv"].shape
    else:
        assert grads["dkv"] is None
    for w in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo"):
        if p[w] is None:
            assert grads["d" + w] is None
        else:
            checked["d" + w] = p[w]

    for gname, arr in checked.items():
        fd = numeric_grad(loss, arr, STEP)
        assert grads[gname].shape == arr.shape, gname
        if gname == "dbk":
            # bk adds q_i . bk to every score of row i: the softmax ignores it, so dbk is 0.
            assert np.linalg.norm(fd) < 1e-8
            assert np.linalg.norm(grads[gname]) < 1e-12
        else:
            assert rel_err(grads[gname], fd) < TOL, (gname, rel_err(grads[gname], fd))


@pytest.mark.parametrize("name", CASES)
def test_forward_matches_per_block_loop(name):
    x, p, _, kw = make_case(name, seed=1)
    y, cache = attention_forward(x, p, **kw)
    np.testing.assert_allclose(y, per_block_forward(x, p, **kw), rtol=1e-12, atol=1e-12)
    assert y.shape == x.shape
    H, S = kw["num_heads"], kw["seq_len"]
    S_kv = kw.get("kv_len", S)
    assert cache["A_cache"].shape == (x.shape[0] // S * H * S, S_kv)


@pytest.mark.parametrize("name", [n for n in CASES if "dropout" not in CASES[n]])
def test_softmax_rows_sum_to_one(name):
    x, p, _, kw = make_case(name)
    _, cache = attention_forward(x, p, **kw)
    np.testing.assert_allclose(cache["A_cache"].sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_padded_keys_get_no_weight():
    x, p, _, kw = make_case("padding")
    _, cache = attention_forward(x, p, **kw)
    B, H, S = 3, 2, 5
    A = cache["A_cache"].reshape(B, H, S, S)
    for b, length in enumerate(CASES["padding"]["lengths"]):
        assert np.all(A[b, :, :, length:] < 1e-12)
        assert np.all(A[b, :, :, :length] > 0)


def test_fully_masked_row_is_uniform():
    x, p, _, kw = make_case("fully_masked_row")
    _, cache = attention_forward(x, p, **kw)
    A = cache["A_cache"].reshape(3, 2, 4, 4)
    np.testing.assert_allclose(A[1], 0.25, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["causal", "cross_causal"])
def test_causal_upper_triangle_is_zero(name):
    x, p, _, kw = make_case(name)
    _, cache = attention_forward(x, p, **kw)
    S, S_kv = kw["seq_len"], kw.get("kv_len", kw["seq_len"])
    future = np.triu(np.ones((S, S_kv), dtype=bool), k=1)
    for blk in cache["A_cache"].reshape(-1, S, S_kv):
        assert np.all(blk[future] < 1e-12)
        assert np.all(blk[~future] > 0)


def test_single_head_no_bias_by_hand():
    rng = np.random.default_rng(7)
    B, S, E = 2, 3, 4
    x = rng.normal(size=(B * S, E))
    p = {w: rng.normal(size=(E, E)) for w in ("Wq", "Wk", "Wv", "Wo")}
    p.update(bq=None, bk=None, bv=None, bo=None)
    y, _ = attention_forward(x, p, num_heads=1, seq_len=S)

    def row_times_wt(r, W):  # r @ W.T, element by element
        return [sum(r[j] * W[i][j] for j in range(E)) for i in range(E)]

    X, W = x.tolist(), {k: p[k].tolist() for k in ("Wq", "Wk", "Wv", "Wo")}
    for b in range(B):
        rows = X[b * S:(b + 1) * S]
        q = [row_times_wt(r, W["Wq"]) for r in rows]
        k = [row_times_wt(r, W["Wk"]) for r in rows]
        v = [row_times_wt(r, W["Wv"]) for r in rows]
        for i in range(S):
            s = [sum(q[i][d] * k[j][d] for d in range(E)) / math.sqrt(E) for j in range(S)]
            e = [math.exp(t - max(s)) for t in s]
            a = [t / sum(e) for t in e]
            ctx = [sum(a[j] * v[j][d] for j in range(S)) for d in range(E)]
            np.testing.assert_allclose(y[b * S + i], row_times_wt(ctx, W["Wo"]), rtol=1e-12, atol=1e-12)


def test_dropout_is_inverted_and_uses_keep():
    x, p, _, kw = make_case("base")
    y0, c0 = attention_forward(x, p, **kw)
    ones = np.ones((3 * 2 * 4, 4))
    _, c1 = attention_forward(x, p, keep=ones, dropout=0.3, **kw)
    np.testing.assert_allclose(c1["ctx_cache"], c0["ctx_cache"] / 0.7, rtol=1e-12)
    np.testing.assert_allclose(c1["A_cache"], c0["A_cache"], rtol=0, atol=0)
    _, c2 = attention_forward(x, p, keep=np.zeros_like(ones), dropout=0.3, **kw)
    np.testing.assert_array_equal(c2["ctx_cache"], 0.0)


def test_padding_mask():
    np.testing.assert_array_equal(padding_mask([3, 0, 1], 3),
                                  [[1, 1, 1], [0, 0, 0], [1, 0, 0]])
    assert padding_mask([2], 4).dtype == np.float64
    with pytest.raises(ValueError, match="lengths must lie in 0..3"):
        padding_mask([4], 3)


def _bad(**change):
    """Inputs of the 'cross' case with one thing changed; returns forward's arguments."""
    x, p, _, kw = make_case("cross")
    args = dict(x=x, p=p, **kw)
    args.update(change)
    return args


@pytest.mark.parametrize("change, message", [
    (dict(num_heads=3), "embed_dim 8 is not divisible by num_heads 3"),
    (dict(num_heads=0), "num_heads must be at least 1"),
    (dict(seq_len=0), "seq_len must be at least 1"),
    (dict(x=np.zeros((8, 8))), "x has 8 rows, not a multiple of seq_len 3"),
    (dict(x=np.zeros((3, 3, 8))), "x must be 2-D"),
    (dict(mask=np.ones((3, 3))), r"mask must have shape \(B, S_kv\) = \(3, 5\)"),
    (dict(mask=np.full((3, 5), 2.0)), "mask must hold only 0"),
    (dict(kv=np.zeros((15, 6))), "kv has width 6, expected embed_dim 8"),
    (dict(kv=np.zeros((12, 8))), r"kv must have B\*kv_len = 3\*5 rows, got 12"),
    (dict(kv=np.zeros((10, 8)), kv_len=None), "kv has 10 rows, not a multiple of the batch size 3"),
    (dict(keep=np.ones((18, 4))), r"keep must have shape \(B\*H\*S, S_kv\) = \(18, 5\)"),
    (dict(dropout=1.0), r"dropout must be in \[0, 1\)"),
    (dict(kv=None, kv_len=5), "kv_len=5 without kv"),
])
def test_forward_rejects_bad_input(change, message):
    args = _bad(**change)
    x, p = args.pop("x"), args.pop("p")
    with pytest.raises(ValueError, match=message):
        attention_forward(x, p, **args)


@pytest.mark.parametrize("name, value, message", [
    ("Wq", np.zeros((8, 4)), r"Wq must have shape \(E, E\) = \(8, 8\)"),
    ("bo", np.zeros(7), r"bo must have shape \(E,\) = \(8,\)"),
])
def test_forward_rejects_bad_params(name, value, message):
    x, p, _, kw = make_case("base")
    p[name] = value
    with pytest.raises(ValueError, match=message):
        attention_forward(x, p, **kw)


def test_forward_rejects_missing_weight():
    x, p, _, kw = make_case("base")
    del p["Wv"]
    with pytest.raises(ValueError, match="params lack Wv"):
        attention_forward(x, p, **kw)


def test_backward_rejects_bad_grad_shape():
    x, p, G, kw = make_case("base")
    _, cache = attention_forward(x, p, **kw)
    with pytest.raises(ValueError, match=r"grad_out must have the output's shape \(12, 8\)"):
        attention_backward(G[:-1], p, cache)
