"""The float path leaves nothing behind: after forward + backward (and a training step) the
heap is back at its baseline, and backward lets the layer's caches go.

The heap in use is measured after each call the same way each time; the first call makes what
later calls of the same shape reuse (such as the dropout mask's buffer). A leaked cache or
gradient of these shapes is hundreds of bytes a call; SLACK allows a few words.
"""

import check
from tinyattn import Adam, Attention, iris_model, load_iris, padding_mask, train_step

SLACK = 64
CALLS = 6
CACHES = ("x_cache", "kv_cache", "Q_cache", "K_cache", "V_cache", "A_cache", "ctx_cache")


def leaves_nothing(name):
    fx = check.fixture(name)
    c = fx["config"]
    what = c["id"]
    a = Attention(16, 4, dropout=c["dropout"], checkpoint=c["checkpoint"], seed=3)
    x = fx["x"]
    kv = fx["kv"] if c["cross"] else None
    mask = padding_mask([5, 3, 4], 5) if c["mask"] else None

    def step():
        a.backward(a.forward(x, 5, mask=mask, causal=c["causal"], kv=kv,
                             kv_len=5 if kv is not None else None, training=True))

    check.heap_returns(step, CALLS, SLACK, "%s forward + backward" % what)
    held = [n for n in CACHES if getattr(a, n) is not None]
    check.equal(held, [], "%s caches held after backward" % what)
    again = check.raises(ValueError, a.backward, x)
    if "before forward" not in again:
        raise AssertionError("%s: a second backward says %r" % (what, again))


def test_attention_forward_backward_returns_the_heap_to_its_baseline():
    check.every(leaves_nothing, check.names("cfg"))


def test_training_step_returns_the_heap_to_its_baseline():
    train_set, _ = load_iris().split(0.2, seed=1)
    model = iris_model(1)
    opt = Adam(model.collect_params())
    x, y = next(train_set.batches(16))
    check.heap_returns(lambda: train_step(model, opt, x, y), CALLS, SLACK, "train_step")
