"""The device's xorshift32 against the reference's, its dropout draws, and its heap use."""

import numpy as np

from device_runner import run_device
from tinyattn_host.reference.training import Rng

SEEDS = [0, 1, 42, 2**30 - 1, 2**32 - 1]
PROBS = [0.0, 0.1, 0.25, 0.5, 0.9]


def test_numbers_match_the_reference_and_steps_allocate_nothing():
    out = run_device("""
import gc
from tinyattn.rng import Rng, keep_threshold
def draws(rng, n):
    return [rng.next32() for _ in range(n)]
OUT['next32'] = [draws(Rng(seed), 50) for seed in IN['seeds']]
r = Rng(7)
OUT['random'] = [r.random() for _ in range(50)]
mismatches = 0
for p in IN['probs']:
    a, b = Rng(11), Rng(11)
    keep = bytearray(2000)
    a.fill_keep(keep, keep_threshold(p))
    mismatches += sum(1 for k in keep if k != (1 if b.random() >= p else 0))
OUT['mismatches'] = mismatches
r = Rng(3)
keep = bytearray(500)
threshold = keep_threshold(0.3)
r.fill_keep(keep, threshold)  # warm: the first call's frame is not what is measured
gc.collect()
gc.disable()
before = gc.mem_alloc()
r.fill_keep(keep, threshold)
OUT['allocated'] = gc.mem_alloc() - before
gc.enable()
state = r.state()
again = Rng(0)
again.set_state(state)
OUT['replay'] = [r.next32() for _ in range(5)] == [again.next32() for _ in range(5)]
""", {"seeds": SEEDS, "probs": PROBS})
    for seed, got in zip(SEEDS, out["next32"]):
        ref = Rng(seed)
        assert got == [ref.next32() for _ in range(50)], seed
    ref = Rng(7)
    want = np.array([ref.next32() for _ in range(50)]) / 2.0**32
    np.testing.assert_allclose(out["random"], want, rtol=1e-6, atol=0)
    assert out["mismatches"] == 0  # fill_keep decides as random() >= p does
    assert out["allocated"] == 0  # 500 draws, no int above 2^30 made, no float
    assert out["replay"] is True
