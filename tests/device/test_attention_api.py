"""The Attention layer's API on the device: construction, bookkeeping, options and bad input."""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.unixport import MicroPythonError

X = np.random.default_rng(3).standard_normal((12, 8))  # 3 sequences of 4 tokens, E = 8


def run(code, **inputs):
    return run_device("from tinyattn import Attention, padding_mask\n" + code,
                      {"x": X, **inputs})


@pytest.mark.parametrize("args, words", [
    ("6, 4", ["embed_dim=6", "num_heads=4"]),
    ("0, 1", ["embed_dim=0", "num_heads=1"]),
    ("8, 0", ["embed_dim=8", "num_heads=0"]),
    ("8, 2, dropout=1.0", ["dropout"]),
])
def test_bad_construction_names_the_numbers(args, words):
    with pytest.raises(MicroPythonError) as err:
        run(f"Attention({args})")
    assert err.value.kind == "ValueError"
    for word in words:
        assert word in err.value.message


def test_seeded_xavier_init_and_zero_biases():
    out = run("""
a, b = Attention(8, 2, seed=5), Attention(8, 2, seed=5)
c = Attention(8, 2, seed=6, use_bias=False)
OUT['Wq'], OUT['Wq_again'], OUT['Wo'], OUT['bq'] = a.Wq, b.Wq, a.Wo, a.bq
OUT['other'] = c.Wq
OUT['no_bias'] = [c.bq is None, c.bk is None, c.bv is None, c.bo is None]
OUT['groups'] = [name for name, _, _ in a.collect_params()]
OUT['groups_nb'] = [name for name, _, _ in c.collect_params()]
OUT['counts'] = [a.num_params(), c.num_params()]
""")
    bound = np.sqrt(6 / 16)
    assert np.array_equal(out["Wq"], out["Wq_again"])
    assert not np.array_equal(out["Wq"], out["other"])
    assert not np.array_equal(out["Wq"], out["Wo"])
    assert np.all(np.abs(out["Wq"]) <= bound) and np.max(np.abs(out["Wq"])) > bound / 2
    assert abs(out["Wq"].mean()) < 0.15
    assert np.array_equal(out["bq"], np.zeros(8))
    assert out["no_bias"] == [True] * 4
    assert out["groups"] == ["Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo"]
    assert out["groups_nb"] == ["Wq", "Wk", "Wv", "Wo"]
    assert out["counts"] == [4 * 64 + 4 * 8, 4 * 64]


@pytest.mark.parametrize("code, words", [
    ("a.forward(np.zeros(8), 4)", ["x", "2-D"]),
    ("a.forward(np.zeros((12, 6)), 4)", ["x", "8 columns", "6"]),
    ("a.forward(IN['x'], 5)", ["12 rows", "5"]),
    ("a.forward(IN['x'], 0)", ["sequence length"]),
    ("a.forward(IN['x'], 4, mask=np.zeros((3, 5)))", ["mask", "(3, 4)"]),
    ("a.forward(IN['x'], 4, kv=np.zeros((6, 4)), kv_len=2)", ["kv", "8 columns"]),
    ("a.forward(IN['x'], 4, kv=np.zeros((8, 8)), kv_len=2)", ["kv", "4 sequences", "3"]),
    ("a.backward(np.zeros((12, 8)))", ["before forward"]),
    ("a.forward(IN['x'], 4); a.backward(np.zeros((4, 8)))", ["grad_out", "(12, 8)"]),
])
def test_bad_input_raises_value_error_naming_the_problem(code, words):
    with pytest.raises(MicroPythonError) as err:
        run("a = Attention(8, 2, seed=1)\n" + code)
    assert err.value.kind == "ValueError", err.value.output
    for word in words:
        assert word in err.value.message, err.value.message


def test_checkpoint_recomputes_the_same_numbers_without_the_weight_cache():
    out = run("""
results = []
for checkpoint in (False, True):
    a = Attention(8, 2, seed=9, checkpoint=checkpoint, dropout=0.3)
    y = a.forward(IN['x'], 4, mask=padding_mask([4, 2, 3], 4), causal=True, training=True)
    no_A = a.A_cache is None  # backward lets every cache go
    dx = a.backward(y)
    results.append((y, dx, a.dWq, a.dbk, no_A, a.cache_bytes(3, 4)))
for i, name in enumerate(('y', 'dx', 'dWq', 'dbk', 'no_A', 'bytes')):
    OUT[name + '0'], OUT[name + '1'] = results[0][i], results[1][i]
""")
    for name in ("y", "dx", "dWq", "dbk"):
        assert np.array_equal(out[name + "0"], out[name + "1"]), name
    assert out["no_A0"] is False and out["no_A1"] is True
    assert out["bytes0"] - out["bytes1"] == 4 * 3 * 2 * 4 * 4  # the B*H*S*S float32 cache


def test_cache_bytes_counts_the_caches_the_layer_holds():
    out = run("""
a = Attention(8, 2, seed=1)
a.forward(IN['x'], 4)
held = [a.x_cache, a.Q_cache, a.K_cache, a.V_cache, a.A_cache, a.ctx_cache]
OUT['held'] = sum(t.size for t in held) * 4
OUT['self'] = a.cache_bytes(3, 4)
kv = np.zeros((15, 8))
a.forward(IN['x'], 4, kv=kv, kv_len=5)
held = [a.x_cache, a.kv_cache, a.Q_cache, a.K_cache, a.V_cache, a.A_cache, a.ctx_cache]
OUT['held_kv'] = sum(t.size for t in held) * 4
OUT['cross'] = a.cache_bytes(3, 4, kv_len=5)
OUT['A_shape'] = list(a.A_cache.shape)
""")
    assert out["self"] == out["held"] == 4 * (5 * 12 * 8 + 3 * 2 * 4 * 4)
    assert out["cross"] == out["held_kv"]
    assert out["A_shape"] == [3 * 2 * 4, 5]


def test_backward_accumulates_until_zero_grad():
    out = run("""
a = Attention(8, 2, seed=2)
g = IN['x'] * 0.5
a.forward(IN['x'], 4); a.backward(g)
OUT['once'] = a.dWv.copy(); OUT['once_b'] = a.dbo.copy()
a.forward(IN['x'], 4); a.backward(g)
OUT['twice'] = a.dWv.copy(); OUT['twice_b'] = a.dbo.copy()
a.zero_grad()
OUT['zero'] = [float(np.sum(gr * gr)) for _, _, gr in a.collect_params()]
""")
    np.testing.assert_allclose(out["twice"], 2 * out["once"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out["twice_b"], 2 * out["once_b"], rtol=1e-6, atol=1e-7)
    assert out["zero"] == [0.0] * 8


def test_dropout_only_in_training_and_keeps_about_one_minus_p():
    out = run("""
plain = Attention(8, 2, seed=4)
drop = Attention(8, 2, seed=4, dropout=0.4)
OUT['plain'] = plain.forward(IN['x'], 4)
OUT['eval'] = drop.forward(IN['x'], 4)
OUT['eval_keep'] = drop.keep_mask() is None
drop.forward(IN['x'], 4, training=True)
OUT['keep'] = drop.keep_mask()
big = Attention(8, 2, seed=4, dropout=0.4)
big.forward(np.zeros((64, 8)), 16, training=True)
OUT['big'] = big.keep_mask()
""")
    assert np.array_equal(out["plain"], out["eval"])
    assert out["eval_keep"] is True
    assert out["keep"].shape == (3 * 2 * 4, 4)
    kept = out["big"].mean()  # 4 * 2 * 16 * 16 = 2048 draws
    assert 0.55 < kept < 0.65


def test_padding_mask_and_its_errors():
    out = run("OUT['m'] = padding_mask([3, 1, 0], 3)")
    assert out["m"].tolist() == [[1, 1, 1], [1, 0, 0], [0, 0, 0]]
    with pytest.raises(MicroPythonError, match="0..3"):
        run("padding_mask([4], 3)")


def test_fits_a_small_heap():
    """E=8, S=4, B=16 (the Iris shape) forward and backward inside a 128 KB heap, as on a small board."""
    out = run_device("""
import gc
from tinyattn import Attention
a = Attention(8, 2, seed=1)
x = np.zeros((64, 8)) + 0.5
gc.collect()
y = a.forward(x, 4)
a.backward(y)
OUT['ok'] = True
""", heap="128k")
    assert out["ok"] is True
