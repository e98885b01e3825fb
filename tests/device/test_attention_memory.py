"""The float path leaves nothing behind (tests/board/case_attention_memory.py): after forward +
backward, in four configurations, and after an Iris training step the heap is back at its
baseline, and backward lets the layer's caches go."""

import numpy as np

from board_cases import board_test
from checks import config_id

CONFIGS = [
    dict(dropout=0.0, checkpoint=False, causal=False, mask=False, cross=False),
    dict(dropout=0.3, checkpoint=False, causal=True, mask=True, cross=False),
    dict(dropout=0.3, checkpoint=True, causal=False, mask=True, cross=False),
    dict(dropout=0.0, checkpoint=False, causal=True, mask=False, cross=True),
]


def make_fixtures():
    """cfgNN: the configuration, x and kv (15 rows: 3 sequences of 5, E = 16)."""
    fixtures = {}
    for i, c in enumerate(CONFIGS):
        rng = np.random.default_rng(5)
        fixtures["cfg%02d" % i] = {"config": dict(c, id=config_id(**c)),
                                   "x": rng.standard_normal((15, 16)),
                                   "kv": rng.standard_normal((15, 16))}
    return fixtures


test_attention_memory_on_board = board_test("case_attention_memory", make_fixtures)
