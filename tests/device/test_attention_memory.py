"""The float path leaves nothing behind: after forward + backward (and a training step) the
heap is back at its baseline, and backward lets the layer's caches go."""

import numpy as np
import pytest

from device_runner import run_device

# The heap in use after each call, measured the same way each time (the first call makes
# what later calls of the same shape reuse, such as the dropout mask's buffer): a leaked
# cache or gradient of these shapes is hundreds of bytes a call. SLACK allows a few words.
SLACK = 64
CALLS = 6

LEAK_CASE = """
import gc
from tinyattn import Attention, padding_mask
c = IN['config']
a = Attention(16, 4, dropout=c['dropout'], checkpoint=c['checkpoint'], seed=3)
x = IN['x']
kv = IN['kv'] if c['cross'] else None
mask = padding_mask([5, 3, 4], 5) if c['mask'] else None

def step():
    grads = a.backward(a.forward(x, 5, mask=mask, causal=c['causal'], kv=kv,
                                 kv_len=5 if kv is not None else None, training=True))
    return grads is not None

in_use = [0] * CALLS
for i in range(CALLS):
    step()
    gc.collect()
    in_use[i] = gc.mem_alloc()
OUT['in_use'] = in_use
OUT['held'] = [name for name in ('x_cache', 'kv_cache', 'Q_cache', 'K_cache', 'V_cache',
                                 'A_cache', 'ctx_cache') if getattr(a, name) is not None]
try:
    a.backward(x)
    OUT['again'] = 'no error'
except ValueError as e:
    OUT['again'] = str(e)
"""

def assert_no_growth(in_use):
    """After the first call, the heap in use stays where the second call left it."""
    assert len(in_use) == CALLS
    assert max(in_use[1:]) - in_use[1] <= SLACK, in_use


CONFIGS = [
    dict(dropout=0.0, checkpoint=False, causal=False, mask=False, cross=False),
    dict(dropout=0.3, checkpoint=False, causal=True, mask=True, cross=False),
    dict(dropout=0.3, checkpoint=True, causal=False, mask=True, cross=False),
    dict(dropout=0.0, checkpoint=False, causal=True, mask=False, cross=True),
]


@pytest.mark.parametrize("c", CONFIGS, ids=lambda c: "-".join(
    k for k, v in c.items() if v) or "plain")
def test_attention_forward_backward_returns_the_heap_to_its_baseline(c):
    rng = np.random.default_rng(5)
    out = run_device(LEAK_CASE.replace("CALLS", str(CALLS)),
                     {"config": c, "x": rng.standard_normal((15, 16)),
                      "kv": rng.standard_normal((15, 16))})
    assert_no_growth(out["in_use"])
    assert out["held"] == []
    assert "before forward" in out["again"]


def test_training_step_returns_the_heap_to_its_baseline():
    out = run_device("""
import gc
from tinyattn import load_iris, iris_model, train_step, Adam
train_set, _ = load_iris().split(0.2, seed=1)
model = iris_model(1)
opt = Adam(model.collect_params())
x, y = next(train_set.batches(16))
in_use = [0] * CALLS
for i in range(CALLS):
    train_step(model, opt, x, y)
    gc.collect()
    in_use[i] = gc.mem_alloc()
OUT['in_use'] = in_use
""".replace("CALLS", str(CALLS)))
    assert_no_growth(out["in_use"])
