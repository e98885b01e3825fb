"""TransformerEncoderLayer(dropout=p) on the device as PyTorch's: its keep masks are the ones
the host draws with the device's Rng from the layer's seed (tests/dropout_masks.py), and the
reference, given those masks, gives its output and every gradient (within 1e-4 relative); off
in inference; dropout 0 is today's layer, weights and numbers (tests/board/case_encoder_dropout.py)."""

import numpy as np

from board_cases import board_test
from checks import f32
from dropout_masks import encoder_keeps
from test_encoder import encoder_params
from tinyattn_host.reference.encoder import encoder_backward, encoder_forward

E, H, F, S, B, P, SEED = 8, 2, 12, 4, 2, 0.25, 77


def make_fixtures():
    rng = np.random.default_rng(2126)
    p = encoder_params(rng, E, F)
    x, G = f32(rng.standard_normal((B * S, E))), f32(rng.standard_normal((B * S, E)))
    mask = np.ones((B, S))
    mask[1, 3] = 0.0
    fixtures = {}
    for norm_first in (False, True):
        keeps = encoder_keeps(SEED, P, B, S, E, F, H)
        y, cache = encoder_forward(x, p, H, S, "relu", norm_first, 1e-5, mask, False, P, keeps)
        dx, grads = encoder_backward(G, p, cache)
        fixtures["norm_first%d" % norm_first] = dict(
            p, x=x, G=G, mask=mask, y=y, dx=dx, norm_first=norm_first,
            eval_y=encoder_forward(x, p, H, S, "relu", norm_first, 1e-5, mask)[0],
            **{"keep." + k: v for k, v in keeps.items()},
            **{"d." + k: v for k, v in grads.items()})
    fixtures["c"] = {"E": E, "H": H, "F": F, "S": S, "P": P, "seed": SEED}
    return fixtures


test_encoder_dropout_on_board = board_test("case_encoder_dropout", make_fixtures)
