"""One Adam step of the vowels model with its encoder's dropout on, against the reference given
the device's own keep masks (tests/device/test_vowels_finetune.py): the masks equal the host's,
the loss within 1e-5 relative, every gradient within 1e-4 relative and every weight's update
within 1e-4 relative plus the float32 rounding of the weight (bk's aside: its gradient is
rounding noise, which Adam scales to lr). with_dropout, which the fine-tune on the device
runs, keeps the weights and draws the same masks."""

import check
from tinyattn import Adam, Sequential, padding_mask, train_step
from ulab import numpy as np

TOL = 1e-4


def norm(a):
    return float(np.sum(a * a)) ** 0.5


def update_close(param, old, new, what):
    """||(param - old) - (new - old)|| <= TOL ||new - old|| + 2^-23 ||new||: the update within
    TOL relative, plus the float32 rounding of the weight it was added to (half an ulp)."""
    error, bound = norm(param - new), TOL * norm(new - old) + 2.0 ** -23 * norm(new)
    assert error <= bound, "%s: error %g over %g" % (what, error, bound)


def keep_masks_of(encoder):
    """{name: the keep mask of the encoder's last training forward}, filled as the forward
    returns (backward drops the attention's mask)."""
    masks, forward = {}, encoder.forward

    def forward_and_keep(*args, **named):
        y = forward(*args, **named)
        for name, part in (("attn", encoder.self_attn), ("drop1", encoder.dropout1),
                           ("ff", encoder.dropout), ("drop2", encoder.dropout2)):
            masks[name] = part.keep_mask()
        return y

    encoder.forward = forward_and_keep
    return masks


def test_a_dropout_training_step_matches_the_reference_given_its_masks():
    c = check.fixture("c")
    f = check.fixture("step")
    model = Sequential.from_config(c["config"], seed=c["seed"])
    for name, param, _ in model.collect_params(False):
        param[:] = f[name]
    optimizer = Adam(model.collect_params(), lr=c["lr"])
    mask = padding_mask(c["lengths"], c["config"][0][1])
    masks = keep_masks_of(model.layers[c["encoder"]])
    loss = train_step(model, optimizer, f["x"], c["labels"], mask)
    check.close(loss, c["loss"], rtol=1e-5, what="the loss")
    for name, keep in masks.items():
        check.equal(keep, f["keep." + name], "the %s keep mask" % name)
    for name, param, grad in model.collect_params():
        # bk's gradient is zero up to rounding (softmax ignores a constant per query)
        scale = f["d.%d.self_attn.bq" % c["encoder"]] if name.endswith("bk") else None
        check.rel_error_below(grad, f["d." + name], TOL, scale=scale, what="d" + name)
        if scale is None:  # Adam divides bk's rounding noise by itself: no figure to compare
            update_close(param, f[name], f["new." + name], "the update of " + name)
    check.heap_returns(lambda: train_step(model, optimizer, f["x"], c["labels"], mask),
                       calls=3, what="a vowels training step with dropout")


def test_with_dropout_keeps_the_weights_and_draws_the_same_masks():
    """with_dropout (what the fine-tune on the device runs) on a model without dropout: the
    same weights, dropout p in the config, and the masks of the Sequential seeded alike."""
    from tinyattn.datasets.vowels import vowels_model, with_dropout

    c = check.fixture("c")
    f = check.fixture("step")
    plain = vowels_model(seed=1)
    for name, param, _ in plain.collect_params(False):
        param[:] = f[name]
    model = with_dropout(plain, c["config"][c["encoder"]][4], seed=c["seed"])
    check.equal(model.config(), c["config"], "the config with dropout")
    for (name, param, _), (_, old, _) in zip(model.collect_params(False),
                                             plain.collect_params(False)):
        check.equal(param, old, "weight " + name)
    masks = keep_masks_of(model.layers[c["encoder"]])
    model.forward(f["x"], True, mask=padding_mask(c["lengths"], c["config"][0][1]))
    for name, keep in masks.items():
        check.equal(keep, f["keep." + name], "the %s keep mask" % name)
