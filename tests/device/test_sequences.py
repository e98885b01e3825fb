"""Variable-length sequences on the device against the reference: a masked model's logits,
gradients and Adam steps (every padded-model layer kind, lengths down to 1), SequenceDataset
(shuffle, batches with their masks, standardisation over real frames) and the .ts loader.
The device cases are tests/board/case_sequences.py."""

import numpy as np

from board_cases import board_test
from checks import f32, missing_docstrings
from sequence_models import LABELS, LENGTHS, MODEL, S, model_params, padded_inputs
from tinyattn_host.reference.layers import cross_entropy
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import Adam, Rng, permutation, train_step
from tinyattn_host.sequences import frame_statistics, load_ts, padding_mask, standardize
from tinyattn_host.virtual.unixport import DEVICE_DIR

TS_TEXT = """# two channels, three series of lengths 3, 1 and 4
@problemName Tiny
@dimensions 2
@equalLength false
@classLabel true up down
@data
1.5,2,3:4,5,-6.25:down
7:8:up
0.5,-1e-3,2,9:2,3,1,0.125:up
2,2:1,-1:down
"""


def model_fixture(rng):
    params, x = model_params(), padded_inputs(rng)
    mask = padding_mask(LENGTHS, S)
    logits, caches = sequential_forward(MODEL, params, x, mask)
    _, dlogits = cross_entropy(logits, LABELS)
    dx, grads = sequential_backward(MODEL, params, caches, dlogits)
    tuned, opt = {k: v.copy() for k, v in params.items()}, Adam(lr=0.01)
    losses = [train_step(MODEL, tuned, opt, x, LABELS, mask) for _ in range(2)]
    fixture = dict(params, config=MODEL, names=list(params), x=x, lengths=LENGTHS,
                   labels=LABELS, logits=logits, dx=dx, losses=losses)
    fixture.update({"d." + n: g for n, g in grads.items()})
    fixture.update({"after." + n: v for n, v in tuned.items()})
    return fixture


def dataset_fixture(path):
    X, y, lengths, classes = load_ts(path)
    order = permutation(len(y), Rng(7))
    mean, std = frame_statistics(X, lengths, 2)
    return dict(X=X, y=y.tolist(), lengths=lengths.tolist(), classes=classes,
                shuffled=X[order], shuffled_y=y[order].tolist(),
                shuffled_lengths=lengths[order].tolist(),
                mask=padding_mask(lengths[order], X.shape[1] // 2),
                mean=mean, std=std, standardized=standardize(X[order], lengths[order], mean, std))


def make_fixtures(tmp=None):
    import tempfile
    from pathlib import Path

    rng = np.random.default_rng(2121)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tiny.ts"
        path.write_text(TS_TEXT)
        dataset = dataset_fixture(path)
    return {"model": model_fixture(rng), "dataset": dataset, "tiny.ts": TS_TEXT.encode(),
            "bad.ts": TS_TEXT.replace("7:8:up", "7:8:left").encode()}


test_sequences_on_board = board_test("case_sequences", make_fixtures)


def test_public_classes_and_functions_have_docstrings():
    for name in ("sequences.py", "tsformat.py", "vowels.py"):
        assert not missing_docstrings(DEVICE_DIR / "tinyattn" / "datasets" / name), name
