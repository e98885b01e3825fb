"""The device's xorshift32 against the reference's draws, its dropout draws, its heap use."""

import check
from tinyattn.rng import Rng, keep_threshold


def draws(rng, n):
    return [rng.next32() for _ in range(n)]


def test_next32_matches_the_reference():
    want = check.fixture("draws")
    for seed, expected in zip(want["seeds"], want["next32"]):
        check.equal(draws(Rng(seed), 50), expected, "seed %d" % seed)


def test_random_matches_the_reference():
    r = Rng(7)
    check.close([r.random() for _ in range(50)], check.fixture("draws")["random"],
                rtol=1e-6, what="random()")


def test_fill_keep_decides_as_random_does():
    for p in check.fixture("draws")["probs"]:
        a, b = Rng(11), Rng(11)
        keep = bytearray(2000)
        a.fill_keep(keep, keep_threshold(p))
        check.equal(keep, [1 if b.random() >= p else 0 for _ in range(2000)], "p=%g" % p)


def test_fill_keep_allocates_nothing():
    r = Rng(3)
    keep = bytearray(500)
    threshold = keep_threshold(0.3)
    r.fill_keep(keep, threshold)  # warm: the first call's frame is not what is measured
    allocated = check.allocates(r.fill_keep, keep, threshold)
    check.equal(allocated, 0, "bytes allocated by 500 draws")  # no int above 2^30, no float


def test_state_replays():
    r = Rng(3)
    draws(r, 7)
    again = Rng(0)
    again.set_state(r.state())
    check.equal(draws(r, 5), draws(again, 5), "draws after set_state")
