"""Dropout in the reference's encoder layer: backward through the keep masks by central finite
differences, dropout 0 equals no dropout, and the masks drop what they say."""

import numpy as np
import pytest

from checks import assert_grads_close, numeric_grad, rel
from dropout_masks import encoder_keeps
from test_reference_encoder import encoder_params
from tinyattn_host.reference.encoder import encoder_backward, encoder_forward

RNG = np.random.default_rng(2125)
E, H, F, S, B, P = 6, 2, 10, 4, 2, 0.25


def params():
    return encoder_params(E, F, RNG)


@pytest.mark.parametrize("norm_first", [False, True])
def test_backward_through_the_dropout_masks(norm_first):
    p, x = params(), RNG.standard_normal((B * S, E))
    keeps = encoder_keeps(11, P, B, S, E, F, H)
    assert all(0 < k.mean() < 1 for k in keeps.values())  # each mask drops and keeps
    G = RNG.standard_normal((B * S, E))
    run = lambda: encoder_forward(x, p, H, S, "gelu", norm_first, 1e-5, None, True, P, keeps)
    y, cache = run()
    dx, grads = encoder_backward(G, p, cache)
    loss = lambda: np.sum(run()[0] * G)
    assert rel(dx, numeric_grad(loss, x)) < 1e-6
    assert_grads_close(grads, {n: numeric_grad(loss, p[n]) for n in p}, 1e-6)


def test_dropout_zero_or_no_masks_is_the_layer_without_dropout():
    p, x = params(), RNG.standard_normal((B * S, E))
    want, _ = encoder_forward(x, p, H, S)
    ones = {k: np.ones_like(v) for k, v in encoder_keeps(3, P, B, S, E, F, H).items()}
    assert np.array_equal(encoder_forward(x, p, H, S, dropout=0.0, keeps=ones)[0], want)
    assert np.array_equal(encoder_forward(x, p, H, S, dropout=P)[0], want)  # inference
    dropped, _ = encoder_forward(x, p, H, S, dropout=P, keeps=encoder_keeps(3, P, B, S, E, F, H))
    assert not np.allclose(dropped, want, atol=1e-3)
