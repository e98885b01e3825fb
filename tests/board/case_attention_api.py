"""The Attention layer's API on the device: construction, bookkeeping, options and bad input
(tests/device/test_attention_api.py). Fixture "x": 3 sequences of 4 tokens, E = 8."""

import math

import check
from tinyattn import Attention, padding_mask
from ulab import numpy as np


def x():
    return check.fixture("x")["x"]


def raises_naming(call, words, what):
    """`call` raises ValueError whose message holds every one of `words`."""
    message = check.raises(ValueError, call)
    for word in words:
        if word not in message:
            raise AssertionError("%s: %r not in the message %r" % (what, word, message))


def differ(a, b, what):
    if a.tolist() == b.tolist():
        raise AssertionError("%s: the same numbers" % what)


def test_bad_construction_names_the_numbers():
    for call, words in (
            (lambda: Attention(6, 4), ["embed_dim=6", "num_heads=4"]),
            (lambda: Attention(0, 1), ["embed_dim=0", "num_heads=1"]),
            (lambda: Attention(8, 0), ["embed_dim=8", "num_heads=0"]),
            (lambda: Attention(8, 2, dropout=1.0), ["dropout"])):
        raises_naming(call, words, "Attention(...) naming %s" % words)


def test_seeded_xavier_init_and_zero_biases():
    a, b = Attention(8, 2, seed=5), Attention(8, 2, seed=5)
    c = Attention(8, 2, seed=6, use_bias=False)
    bound = math.sqrt(6 / 16)
    check.equal(a.Wq, b.Wq, "Wq of the same seed")
    differ(a.Wq, c.Wq, "Wq of seeds 5 and 6")
    differ(a.Wq, a.Wo, "Wq and Wo")
    values = [v for row in a.Wq.tolist() for v in row]
    largest = max(abs(v) for v in values)
    if not (largest <= bound and largest > bound / 2):
        raise AssertionError("max |Wq| = %g, expected in (%g, %g]" % (largest, bound / 2, bound))
    mean = sum(values) / len(values)
    if not abs(mean) < 0.15:
        raise AssertionError("mean of Wq %g" % mean)
    check.equal(a.bq, [0.0] * 8, "bq")
    check.equal([c.bq is None, c.bk is None, c.bv is None, c.bo is None], [True] * 4,
                "no biases")
    check.equal([name for name, _, _ in a.collect_params()],
                ["Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo"], "parameter groups")
    check.equal([name for name, _, _ in c.collect_params()], ["Wq", "Wk", "Wv", "Wo"],
                "parameter groups without bias")
    check.equal([a.num_params(), c.num_params()], [4 * 64 + 4 * 8, 4 * 64], "num_params")


def test_bad_input_raises_value_error_naming_the_problem():
    X = x()

    def backward_bad_shape(a):
        a.forward(X, 4, training=True)
        a.backward(np.zeros((4, 8)))

    for code, call, words in (
            ("x 1-D", lambda a: a.forward(np.zeros(8), 4), ["x", "2-D"]),
            ("x 6 columns", lambda a: a.forward(np.zeros((12, 6)), 4), ["x", "8 columns", "6"]),
            ("seq_len 5", lambda a: a.forward(X, 5), ["12 rows", "5"]),
            ("seq_len 0", lambda a: a.forward(X, 0), ["sequence length"]),
            ("mask (3, 5)", lambda a: a.forward(X, 4, mask=np.zeros((3, 5))), ["mask", "(3, 4)"]),
            ("kv 4 columns", lambda a: a.forward(X, 4, kv=np.zeros((6, 4)), kv_len=2),
             ["kv", "8 columns"]),
            ("kv 4 sequences", lambda a: a.forward(X, 4, kv=np.zeros((8, 8)), kv_len=2),
             ["kv", "4 sequences", "3"]),
            ("backward first", lambda a: a.backward(np.zeros((12, 8))), ["before forward"]),
            ("grad_out (4, 8)", backward_bad_shape, ["grad_out", "(12, 8)"])):
        a = Attention(8, 2, seed=1)
        raises_naming(lambda: call(a), words, code)


def test_checkpoint_recomputes_the_same_numbers_without_the_weight_cache():
    X = x()
    results = []
    for checkpoint in (False, True):
        a = Attention(8, 2, seed=9, checkpoint=checkpoint, dropout=0.3)
        y = a.forward(X, 4, mask=padding_mask([4, 2, 3], 4), causal=True, training=True)
        no_A = a.A_cache is None  # backward lets every cache go
        dx = a.backward(y)
        results.append((y, dx, a.dWq, a.dbk, no_A, a.cache_bytes(3, 4)))
    for i, name in enumerate(("y", "dx", "dWq", "dbk")):
        check.equal(results[1][i], results[0][i], "%s with and without checkpoint" % name)
    check.equal([results[0][4], results[1][4]], [False, True], "A_cache is None")
    check.equal(results[0][5] - results[1][5], 4 * 3 * 2 * 4 * 4,
                "cache_bytes saved: the B*H*S*S float32 cache")


def test_cache_bytes_counts_the_caches_the_layer_holds():
    X = x()
    a = Attention(8, 2, seed=1)
    a.forward(X, 4, training=True)
    held = [a.x_cache, a.Q_cache, a.K_cache, a.V_cache, a.A_cache, a.ctx_cache]
    check.equal([a.cache_bytes(3, 4), sum(t.size for t in held) * 4],
                [4 * (5 * 12 * 8 + 3 * 2 * 4 * 4)] * 2, "self-attention cache_bytes, held")
    a.forward(X, 4, kv=np.zeros((15, 8)), kv_len=5, training=True)
    held = [a.x_cache, a.kv_cache, a.Q_cache, a.K_cache, a.V_cache, a.A_cache, a.ctx_cache]
    check.equal(a.cache_bytes(3, 4, kv_len=5), sum(t.size for t in held) * 4,
                "cross-attention cache_bytes")
    check.equal(a.A_cache.shape, (3 * 2 * 4, 5), "A_cache shape")


def test_backward_accumulates_until_zero_grad():
    X = x()
    a = Attention(8, 2, seed=2)
    g = X * 0.5
    a.forward(X, 4, training=True)
    a.backward(g)
    once, once_b = a.dWv.copy(), a.dbo.copy()
    a.forward(X, 4, training=True)
    a.backward(g)
    check.close_each(a.dWv, once * 2, atol=1e-7, rtol=1e-6, what="dWv after two backwards")
    check.close_each(a.dbo, once_b * 2, atol=1e-7, rtol=1e-6, what="dbo after two backwards")
    a.zero_grad()
    check.equal([float(np.sum(gr * gr)) for _, _, gr in a.collect_params()], [0.0] * 8,
                "the gradients after zero_grad")


def test_dropout_only_in_training_and_keeps_about_one_minus_p():
    X = x()
    plain = Attention(8, 2, seed=4)
    drop = Attention(8, 2, seed=4, dropout=0.4)
    check.equal(drop.forward(X, 4), plain.forward(X, 4), "dropout layer outside training")
    check.equal([drop.keep_mask() is None], [True], "no keep-mask outside training")
    drop.forward(X, 4, training=True)
    check.equal(drop.keep_mask().shape, (3 * 2 * 4, 4), "keep-mask shape")
    big = Attention(8, 2, seed=4, dropout=0.4)
    big.forward(np.zeros((64, 8)), 16, training=True)
    keep = big.keep_mask()
    kept = float(np.sum(np.sum(keep, axis=1))) / keep.size  # 4 * 2 * 16 * 16 = 2048 draws
    if not 0.55 < kept < 0.65:
        raise AssertionError("dropout 0.4 kept %g" % kept)


def test_padding_mask_and_its_errors():
    check.equal(padding_mask([3, 1, 0], 3), [[1, 1, 1], [1, 0, 0], [0, 0, 0]], "padding_mask")
    message = check.raises(ValueError, padding_mask, [4], 3)
    if "0..3" not in message:
        raise AssertionError("padding_mask([4], 3) says %r" % message)
