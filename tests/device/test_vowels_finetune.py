"""One training step of the whole vowels model with its encoder's dropout on (p = 0.1, as a
fine-tune on the device runs it: tinyattn.datasets.vowels.with_dropout): 4 utterances of
different lengths, padded, with their masks. The host draws the keep masks with the device's
Rng from the Sequential's seed (tests/dropout_masks.py); the device's masks must equal them,
and the reference given them must give the device's loss (1e-5 relative), every gradient
(1e-4 relative, Frobenius) and Adam's update of every weight but bk (1e-4 relative plus the
weight's float32 rounding; bk's gradient is rounding noise) (tests/board/case_vowels_finetune.py);
with_dropout on the model without dropout gives the same weights and masks. Few rows, one
step: it runs on the stand-in too. And the fine-tune command's device run on 8 rows."""

import numpy as np

from board_cases import board_test
from checks import f32
from dropout_masks import sequential_keeps
from tinyattn_host import vowels
from tinyattn_host.digits import init_params
from tinyattn_host.reference.layers import cross_entropy
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import Adam
from tinyattn_host.sequences import padding_mask

P, SEED, LR, ROWS = 0.1, 5, 5e-4, (0, 1, 7, 40)  # rows of the train set: lengths differ


def reference_step(config, params, x, y, mask, keeps):
    """(loss, grads, params after one Adam step) of the reference given the keep masks."""
    logits, caches = sequential_forward(config, params, x, mask, keeps)
    loss, dlogits = cross_entropy(logits, y)
    _, grads = sequential_backward(config, params, caches, dlogits)
    after = dict(params)
    Adam(lr=LR).step(after, grads)
    return loss, grads, after


def make_fixtures():
    config = vowels.DEVICE.vowels_config(dropout=P)
    X, y, lengths = vowels.load_vowels()["train"]
    x, y, lengths = f32(X[list(ROWS)]), y[list(ROWS)], lengths[list(ROWS)]
    assert len(set(lengths.tolist())) == len(ROWS)
    mask = padding_mask(lengths, vowels.DEVICE.SEQ_LEN)
    params = {k: f32(v) for k, v in init_params(config, 1).items()}
    keeps = sequential_keeps(config, SEED, len(ROWS))
    loss, grads, after = reference_step(config, params, x, y, mask, keeps)
    no_dropout = reference_step(config, params, x, y, mask, None)[0]
    assert abs(loss - no_dropout) > 1e-3 * abs(loss)  # the masks change the step
    encoder = next(iter(keeps))
    return {"step": dict(params, x=x, **{"keep." + k: v for k, v in keeps[encoder].items()},
                         **{"d." + k: v for k, v in grads.items()},
                         **{"new." + k: v for k, v in after.items()}),
            "c": {"config": config, "seed": SEED, "lr": LR, "labels": y.tolist(),
                  "lengths": lengths.tolist(), "loss": loss, "encoder": encoder}}


test_vowels_finetune_on_board = board_test("case_vowels_finetune", make_fixtures)


def test_the_device_finetune_runs_on_a_few_rows(tmp_path):
    """`vowels --finetune-on-device --rows 8 --epochs 1`'s device run (vowels_finetune.py, RUN),
    on a model of fresh weights: accuracies, a finite loss an epoch, the heap sampled."""
    import argparse
    import math

    from tinyattn_host import vowels_device

    config = vowels.DEVICE.vowels_config()
    params = {k: f32(v) for k, v in init_params(config, 1).items()}
    vowels_device.prepare(tmp_path, params, config, [vowels.VOWELS_DIR / vowels.DEVICE.TRAIN_FILE,
                                                     vowels.VOWELS_DIR / vowels.DEVICE.TEST_FILE])
    args = argparse.Namespace(epochs=1, lr=LR, dropout=P, seed=SEED, train_on_device=False,
                              rows=8)
    for sample in (False, True):
        result = vowels_device.run_once(tmp_path, args, "64m", sample=sample)
        assert result["train_rows"] == result["test_rows"] == 8 and result["epochs"] == 1
        assert 0 <= result["before"] <= 1 and 0 <= result["after"] <= 1
        assert all(math.isfinite(v) for v in result["loss"]) and result["held"] > 0
        assert (result["peak"] is None) != sample and (not sample or result["peak"] > 0)
