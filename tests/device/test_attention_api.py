"""The Attention layer's API on the device (tests/board/case_attention_api.py): construction,
bookkeeping, options and bad input; and (case_attention_small_heap.py) the Iris shape's forward
and backward in a small heap."""

import numpy as np

from board_cases import board_test
from checks import f32
from tinyattn_host.virtual import unixport
from tinyattn_host.reference import attention_backward, attention_forward

X = np.random.default_rng(3).standard_normal((12, 8))  # 3 sequences of 4 tokens, E = 8
PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")


def make_fixtures():
    return {"x": {"x": X}}


test_attention_api_on_board = board_test("case_attention_api", make_fixtures)


def make_small_heap_fixtures():
    """E=8, S=4, B=16: the parameters, x, G and the reference's y, dx and gradients."""
    rng = np.random.default_rng(8)
    p = {n: f32(rng.standard_normal((8, 8)) / np.sqrt(8) if n[0] == "W"
                else 0.1 * rng.standard_normal(8)) for n in PARAMS}
    x, G = f32(rng.standard_normal((64, 8))), f32(rng.standard_normal((64, 8)))
    y, cache = attention_forward(x, p, 2, 4)
    grads = {k: v for k, v in attention_backward(G, p, cache).items() if v is not None}
    return {"params": p, "x": {"x": x}, "G": {"G": G}, "y": {"y": y},
            "dx": {"dx": grads.pop("dx")}, "grads": grads}


# 128 KB as on a small board, with a real ulab (96 KB suffice on a 32-bit port). The stand-in is a
# Python module (some 18 KB of the heap) whose operations make Python lists, and with the
# runner and check.py loaded its heap fragments: there the run needs 176 KB, so it gets 192 KB.
SMALL_HEAP = "128k" if unixport.has_ulab(unixport.interpreter()) else "192k"
test_attention_small_heap_on_board = board_test(
    "case_attention_small_heap", make_small_heap_fixtures, heap=SMALL_HEAP)
