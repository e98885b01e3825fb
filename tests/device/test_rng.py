"""The device's xorshift32 (tinyattn/rng.py, which the host's reference runs too) against
xorshift32 written out on 32-bit integers here (tests/board/case_rng.py on the board)."""

from board_cases import board_test
from tinyattn_host.reference.training import Rng

SEEDS = [0, 1, 42, 2**30 - 1, 2**32 - 1]
PROBS = [0.0, 0.1, 0.25, 0.5, 0.9]
MASK = 0xFFFFFFFF


def xorshift32(seed, count):
    """Marsaglia's xorshift32 (13, 17, 5) from the device's seeding."""
    x = ((seed * 2654435761) + 0x9E3779B9) & MASK or 0x9E3779B9
    out = []
    for _ in range(count):
        x ^= (x << 13) & MASK
        x ^= x >> 17
        x ^= (x << 5) & MASK
        out.append(x)
    return out


def test_the_host_runs_the_same_numbers():
    for seed in SEEDS:
        r = Rng(seed)
        assert [r.next32() for _ in range(50)] == xorshift32(seed, 50), seed


def make_fixtures():
    return {"draws": {
        "seeds": SEEDS,
        "next32": [xorshift32(seed, 50) for seed in SEEDS],
        "random": [v / 2.0**32 for v in xorshift32(7, 50)],
        "probs": PROBS,
    }}


test_rng_on_board = board_test("case_rng", make_fixtures)
