"""Inference keeps nothing, and a model that is only run has no gradient buffers
(tests/device/test_inference_memory.py).

Every layer kind: a forward(x) leaves the heap where it was before it, while a training
forward (the same call with training=True) keeps its caches, so the measure can see them.
A model made or loaded holds its weights only; collect_params() (an optimizer's) makes the
gradients, once. (Heap figures: a real ulab only; the stand-in's lists move under gc.)
"""

import check
from tinyattn import (Activation, Attention, Dense, Gelu, GlobalAvgPool, LayerNorm,
                      PositionalEmbedding, SelfAttention, Sequential, Tokens,
                      TransformerEncoderLayer, load, save)
from tinyattn.datasets.digits import digits_model
from tinyattn.rng import Rng

SLACK = 64  # a few words: the heap measure's own noise


def rows(n, cols, seed=1):
    return Rng(seed).uniform_matrix(n, cols, -2.0, 2.0)


def layers():
    """(what, layer, its forward on a batch) of every layer kind."""
    x8, x64 = rows(12, 8), rows(3, 64)
    return [
        ("Attention", Attention(8, 2, seed=1),
         lambda l, t: l.forward(x8 + 0.0, 4, training=t)),
        ("SelfAttention", SelfAttention(8, 2, 4, seed=1), lambda l, t: l.forward(x8 + 0.0, t)),
        ("Dense", Dense(8, 16, seed=1), lambda l, t: l.forward(x8 + 0.0, t)),
        ("Activation relu", Activation("relu"), lambda l, t: l.forward(x8 + 0.0, t)),
        ("Activation gelu", Activation("gelu"), lambda l, t: l.forward(x8 + 0.0, t)),
        ("Gelu", Gelu(), lambda l, t: l.forward(x8 + 0.0, t)),
        ("LayerNorm", LayerNorm(8), lambda l, t: l.forward(x8 + 0.0, t)),
        ("PositionalEmbedding", PositionalEmbedding(4, 8, seed=1),
         lambda l, t: l.forward(x8 + 0.0, t)),
        ("GlobalAvgPool", GlobalAvgPool(4), lambda l, t: l.forward(x8 + 0.0, t)),
        ("Tokens", Tokens(8), lambda l, t: l.forward(x64 + 0.0, t)),
        ("TransformerEncoderLayer", TransformerEncoderLayer(8, 2, 16, seq_len=4, seed=1),
         lambda l, t: l.forward(x8 + 0.0, t)),
        ("Sequential (digits)", digits_model(3), lambda l, t: l.forward(x64 + 0.0, t)),
    ]


def held(layer, forward, training):
    """Heap the layer holds after one forward of it, its output dropped."""
    before = check.heap_in_use()
    y = forward(layer, training)
    y = None
    return check.heap_in_use() - before


def least_held(training, tries=3):
    """[(what, the least heap a new layer of that kind holds after its first forward)] over
    `tries` new layers of each kind. A cache is in every measure; an object that a stale word
    on the C stack keeps alive (the collector is conservative) is in one (432 bytes once, at
    a different kind each run, on an i686 port through the virtual board)."""
    least = {}
    for _ in range(tries):
        for what, layer, forward in layers():
            kept = held(layer, forward, training)
            least[what] = min(least.get(what, kept), kept)
            layer = None
    return [(what, least[what]) for what, _, _ in layers()]


def test_inference_keeps_nothing_in_any_layer_kind():
    for _, layer, forward in layers():  # other instances: what a first call makes to reuse
        forward(layer, False)
    for what, kept in least_held(False):
        assert kept <= SLACK, "%s: an inference forward keeps %d bytes" % (what, kept)
    for what, kept in least_held(True):
        if what not in ("GlobalAvgPool", "Tokens", "PositionalEmbedding"):  # a batch size only
            assert kept > SLACK, "%s: a training forward keeps only %d bytes" % (what, kept)
    for what, layer, forward in layers():
        forward(layer, True)
        layer.clear_caches()
        check.heap_returns(lambda: forward(layer, False), 4, SLACK, what)


def test_a_model_only_run_has_no_gradient_buffers():
    model = digits_model(3)
    assert all(grad is None for _, _, grad in model.collect_params(False)), "gradients at start"
    model.forward(rows(2, 64), False)
    assert all(grad is None for _, _, grad in model.collect_params(False)), "after a forward"
    before = check.heap_in_use()
    groups = model.collect_params()  # an optimizer's: every gradient made now, zero
    made = check.heap_in_use() - before
    groups = None
    assert made >= 4 * model.num_params(), "collect_params made %d bytes" % made
    again = check.heap_in_use()
    model.collect_params()
    assert check.heap_in_use() - again <= SLACK, "collect_params made them twice"
    for _, _, grad in model.collect_params(False):
        check.equal(grad, grad * 0.0, "a new gradient")


def _model_file():
    path = "inference_memory_model.bin"
    save(digits_model(5), path)
    return path


def test_a_loaded_inference_model_holds_under_0_6_of_a_trainable_one():
    path = _model_file()
    before = check.heap_in_use()
    model = load(path)
    model.forward(rows(1, 64), False)
    inference = check.heap_in_use() - before
    model.collect_params()  # what an optimizer takes: the model becomes trainable
    trainable = check.heap_in_use() - before
    assert inference < 0.6 * trainable, "inference %d bytes, trainable %d" % (
        inference, trainable)
