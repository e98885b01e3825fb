"""The device's LayerNorm, PositionalEmbedding, Gelu and TransformerEncoderLayer against the
float64 reference (relative Frobenius error under 1e-4), alone and in a Sequential that is
saved, loaded and trained with Adam; their bad input gets a clear ValueError."""

import json

import check
from tinyattn import Adam, Sequential, load, padding_mask, save, train_step
from tinyattn.nn.encoder import TransformerEncoderLayer
from tinyattn.nn.gelu import Gelu
from tinyattn.nn.norm import LayerNorm
from tinyattn.nn.positional import PositionalEmbedding
from ulab import numpy as np

TOL = 1e-4


def plain(value):
    """A config as JSON reads it (lists, not tuples)."""
    return json.loads(json.dumps(value))


def grads_close(got, f, names, prefix, what):
    """Every gradient within TOL relative (norm). A key bias ("...bk") has an exact gradient
    of 0 (it adds one constant to a softmax row's scores): it is judged on bq's scale."""
    for name in names:
        want = f[prefix + name]
        scale = f[prefix + name[:-2] + "bq"] if name.endswith("bk") else want
        check.rel_error_below(got[name], want, TOL, scale=scale, what="%s d%s" % (what, name))


def test_layernorm_matches_reference_and_accumulates():
    f = check.fixture("layernorm")
    n = LayerNorm(5, eps=1e-5)
    check.equal(n.gamma, [1.0] * 5, "initial gamma")
    check.equal(n.beta, [0.0] * 5, "initial beta")
    n.gamma[:] = f["gamma"]
    n.beta[:] = f["beta"]
    check.rel_error_below(n.forward(f["x"], True), f["y"], TOL, what="y")
    check.rel_error_below(n.backward(f["G"]), f["dx"], TOL, what="dx")
    n.forward(f["x"], True)
    n.backward(f["G"])
    check.rel_error_below(n.dgamma, f["dgamma2"], TOL, what="dgamma of two backwards")
    check.rel_error_below(n.dbeta, f["dbeta2"], TOL, what="dbeta of two backwards")
    check.equal([name for name, _, _ in n.collect_params()], ["gamma", "beta"], "names")
    check.equal(plain(n.config()), f["config"], "config")
    n.zero_grad()
    check.equal(n.dgamma, [0.0] * 5, "dgamma after zero_grad")


def test_positional_embedding_matches_reference():
    f = check.fixture("positional")
    p = PositionalEmbedding(3, 4, seed=5)
    init = p.P.copy()
    check.equal(init, PositionalEmbedding(3, 4, seed=5).P, "the same seed, the same P")
    check.equal(init.shape, (3, 4), "P's shape")
    top = max(abs(v) for row in init.tolist() for v in row)
    assert 0 < top <= f["init_bound"], "initial max |P| %g" % top
    p.P[:] = f["P"]
    check.rel_error_below(p.forward(f["x"], True), f["y"], TOL, what="y")
    check.rel_error_below(p.backward(f["G"]), f["dx"], TOL, what="dx")
    check.rel_error_below(p.dP, f["dP"], TOL, what="dP")
    check.equal(plain(p.config()), f["config"], "config")


def test_gelu_is_the_erf_form_within_float32():
    f = check.fixture("gelu")
    g = Gelu()
    check.close(g.forward(f["x"], True), f["y"], atol=f["atol"], what="y")
    check.rel_error_below(g.backward(f["G"]), f["dx"], TOL, what="dx")


def encoder_layer_matches(name):
    """Encoder layer fixture `name`: output, input and weight gradients, config; a forward
    and backward leave the heap as they found it."""
    f = check.fixture(name)
    c = f["c"]
    what = "%s (%s, norm_first %s, lengths %s, causal %s)" % (
        name, c["act"], c["norm_first"], c["lengths"], c["causal"])
    layer = TransformerEncoderLayer(c["E"], c["H"], c["F"], activation=c["act"],
                                    norm_first=c["norm_first"], seq_len=c["S"], seed=3)
    names = sorted(n for n, _, _ in layer.collect_params())
    check.equal(names, f["names"], what + " parameters")
    for n, param, grad in layer.collect_params():
        param[:] = f[n]
    mask = padding_mask(c["lengths"], c["S"]) if c["lengths"] else None
    check.rel_error_below(layer.forward(f["x"], True, mask=mask, causal=c["causal"]),
                          f["y"], TOL, what=what + " y")
    check.rel_error_below(layer.backward(f["G"]), f["dx"], TOL, what=what + " dx")
    grads_close(dict((n, g) for n, _, g in layer.collect_params()), f, names, "d", what)
    check.equal(plain(layer.config()), f["config"], what + " config")

    def step():
        layer.forward(f["x"], True, mask=mask, causal=c["causal"])
        layer.backward(f["G"])

    check.heap_returns(step, what=what + " forward and backward")


def test_encoder_layer_matches_reference():
    for name in check.names("encoder"):
        encoder_layer_matches(name)


def test_sequential_with_encoder_saves_loads_and_trains_like_the_reference():
    f = check.fixture("sequential")
    x, labels = f["x"], f["labels"]
    m = Sequential.from_config(f["config"], seed=9)
    check.equal(plain(m.config()), plain(f["config"]), "config")
    check.equal([n for n, _, _ in m.collect_params()], f["names"], "parameter names")
    check.set_params(m, f)
    logits = m.forward(x)
    check.rel_error_below(logits, f["logits"], TOL, what="logits")
    path = check.path("m.bin")  # a scratch file
    save(m, path)
    m2 = load(path)
    check.equal(m2.forward(x), logits, "logits of the model saved and loaded")
    opt = Adam(m2.collect_params(), lr=0.01)
    losses = [train_step(m2, opt, x, labels) for _ in range(2)]
    check.close_each(losses, f["losses"], atol=1e-8, rtol=TOL, what="losses")  # np.allclose
    for name, p, g in m2.collect_params():
        if not name.endswith("self_attn.bk"):  # its gradient is float32 noise around 0
            check.rel_error_below(p, f["after." + name], TOL, what=name + " after two steps")
    check.heap_returns(lambda: train_step(m2, opt, x, labels), what="an Adam step")
    check.heap_returns(lambda: (save(m2, path), load(path)), what="a save and load")


def test_sequential_gradients_match_reference():
    f = check.fixture("gradients")
    m = Sequential.from_config(f["config"], seed=4)
    check.set_params(m, f)
    m.forward(f["x"], True)
    check.rel_error_below(m.backward(f["G"]), f["dx"], TOL, what="dx")
    got = dict((n, g) for n, _, g in m.collect_params())
    check.equal(sorted(got), sorted(f["names"]), "parameter names")
    grads_close(got, f, f["names"], "d.", "Sequential")


def _backward_twice():
    layer = TransformerEncoderLayer(8, 2, 16, seq_len=4)
    y = layer.forward(np.zeros((4, 8)) + 1.0, True)
    layer.backward(y)
    layer.backward(y)  # the first backward dropped the caches


BAD_INPUT = [
    ("LayerNorm(0)", lambda: LayerNorm(0), ["normalized_shape", "0"]),
    ("LayerNorm(4, eps=0.0)", lambda: LayerNorm(4, eps=0.0), ["eps"]),
    ("LayerNorm(4).forward(5 columns)", lambda: LayerNorm(4).forward(np.zeros((2, 5))),
     ["x", "4 columns", "5"]),
    ("LayerNorm(4).backward first", lambda: LayerNorm(4).backward(np.zeros((2, 4))),
     ["backward() called before forward(x, training=True)"]),
    ("PositionalEmbedding(4, 8).forward(6 rows)",
     lambda: PositionalEmbedding(4, 8).forward(np.zeros((6, 8))), ["6 rows", "4"]),
    ("PositionalEmbedding(0, 8)", lambda: PositionalEmbedding(0, 8), ["seq_len", "0"]),
    ("TransformerEncoderLayer(8, 3, 16)", lambda: TransformerEncoderLayer(8, 3, 16),
     ["divisible", "3"]),
    ("dropout=1.0", lambda: TransformerEncoderLayer(8, 2, 16, dropout=1.0), ["dropout", "[0, 1)"]),
    ("activation='tanh'", lambda: TransformerEncoderLayer(8, 2, 16, activation="tanh"),
     ["activation", "tanh"]),
    ("forward without seq_len",
     lambda: TransformerEncoderLayer(8, 2, 16).forward(np.zeros((4, 8))), ["seq_len"]),
    ("a mask of the wrong shape",
     lambda: TransformerEncoderLayer(8, 2, 16, seq_len=4).forward(np.zeros((4, 8)),
                                                                  mask=np.zeros((2, 4))),
     ["mask", "(1, 4)"]),
    ("Sequential of a Conv", lambda: Sequential.from_config([["Conv", 3]]),
     ["unknown layer kind", "Conv"]),
    ("backward twice", _backward_twice, ["backward() called before forward(x, training=True)"]),
]


def test_bad_input_gets_a_clear_value_error():
    for what, call, words in BAD_INPUT:
        message = check.raises(ValueError, call)
        for word in words:
            assert word in message, "%s: %r lacks %r" % (what, message, word)
