"""TransformerEncoderLayer(dropout=p) against the reference given the same keep masks (relative
Frobenius error under 1e-4); the masks the device drew equal the host's; off in inference;
dropout 0 is the layer without dropout."""

import check
from tinyattn import TransformerEncoderLayer
from ulab import numpy as np

TOL = 1e-4


def layer(c, norm_first, p=None, seed=None):
    return TransformerEncoderLayer(c["E"], c["H"], c["F"], dropout=c["P"] if p is None else p,
                                   norm_first=norm_first, seq_len=c["S"],
                                   seed=c["seed"] if seed is None else seed)


def set_weights(enc, f):
    for name, param, _ in enc.collect_params():
        param[:] = f[name]


def test_training_forward_and_backward_match_the_reference_with_the_same_masks():
    c = check.fixture("c")
    for norm_first in (0, 1):
        f = check.fixture("norm_first%d" % norm_first)
        what = "norm_first %d" % norm_first
        enc = layer(c, norm_first == 1)
        set_weights(enc, f)
        y = enc.forward(f["x"], True, mask=f["mask"])
        for name, part in (("attn", enc.self_attn), ("drop1", enc.dropout1),
                           ("ff", enc.dropout), ("drop2", enc.dropout2)):
            check.equal(part.keep_mask(), f["keep." + name], "%s: the %s keep mask" % (what, name))
        check.rel_error_below(y, f["y"], TOL, what=what + " y")
        check.rel_error_below(enc.backward(f["G"]), f["dx"], TOL, what=what + " dx")
        for name, _, grad in enc.collect_params():
            scale = f["d.self_attn.bq"] if name.endswith("bk") else f["d." + name]
            check.rel_error_below(grad, f["d." + name], TOL, scale=scale, what=what + " d" + name)
        check.rel_error_below(enc.forward(f["x"], False, mask=f["mask"]), f["eval_y"], TOL,
                              what=what + " inference (no dropout)")


def test_seeded_reproducible_and_new_masks_every_step():
    c = check.fixture("c")
    f = check.fixture("norm_first0")
    a, b = layer(c, False), layer(c, False)
    set_weights(a, f)
    set_weights(b, f)
    check.equal(a.forward(f["x"], True), b.forward(f["x"], True), "the same seed, the same run")
    first = a.dropout1.keep_mask()
    a.forward(f["x"], True)
    assert not np.max(np.maximum(first - a.dropout1.keep_mask(),
                                 a.dropout1.keep_mask() - first)) == 0.0, "a new mask each step"
    check.heap_returns(lambda: (a.forward(f["x"], True), a.backward(f["x"])),
                       what="a training step with dropout")


def test_dropout_zero_is_the_layer_without_dropout():
    c = check.fixture("c")
    f = check.fixture("norm_first1")
    off = layer(c, True, p=0.0, seed=5)
    plain = TransformerEncoderLayer(c["E"], c["H"], c["F"], norm_first=True, seq_len=c["S"],
                                    seed=5)
    for (n, p1, _), (_, p2, _) in zip(off.collect_params(), plain.collect_params()):
        check.equal(p1, p2, "weight " + n)
    check.equal(off.forward(f["x"], True), plain.forward(f["x"], True), "training forward")
    check.equal(off.config()[4], 0.0, "config dropout")
    check.equal(layer(c, True).config()[4], c["P"], "config keeps the dropout")
    message = check.raises(ValueError, lambda: layer(c, True, p=1.0))
    assert "dropout" in message, message
