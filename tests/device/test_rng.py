"""The device's xorshift32 against the reference's (tests/board/case_rng.py on the board)."""

from board_cases import board_test
from tinyattn_host.reference.training import Rng

SEEDS = [0, 1, 42, 2**30 - 1, 2**32 - 1]
PROBS = [0.0, 0.1, 0.25, 0.5, 0.9]


def make_fixtures():
    ref = Rng(7)
    return {"draws": {
        "seeds": SEEDS,
        "next32": [[r.next32() for _ in range(50)] for r in map(Rng, SEEDS)],
        "random": [ref.next32() / 2.0**32 for _ in range(50)],
        "probs": PROBS,
    }}


test_rng_on_board = board_test("case_rng", make_fixtures)
