"""The reference with padding masks through a whole model: masked pooling against a case
written as PyTorch users write it, padded rows that change nothing they must not change, and
backward through it all by central finite differences; the .ts reader and the vowels data."""

import numpy as np
import pytest

import sequence_models
from checks import assert_grads_close, numeric_grad, rel
from sequence_models import E, F, LABELS, LENGTHS, MODEL, S, model_params
from tinyattn_host.reference.layers import cross_entropy, gap_backward, gap_forward
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import Adam, train_step
from tinyattn_host.sequences import frame_statistics, load_ts, padding_mask
from tinyattn_host import vowels
from tinyattn_host.digits import init_params
from tinyattn_host.vowels import VOWELS_DIR, load_vowels

RNG = np.random.default_rng(21)


def padded_inputs():
    return sequence_models.padded_inputs(RNG)


def test_masked_pool_is_pytorchs_mean_over_the_real_length():
    # PyTorch's layout: h (B, S, E) batch first, key_padding_mask (B, S) True = padding;
    # the users' masked mean: (h * ~pad[..., None]).sum(1) / (~pad).sum(1, keepdim=True)
    h = np.arange(2 * 3 * 2, dtype=np.float64).reshape(2, 3, 2)  # [[0,1],[2,3],[4,5]], ...
    pad = np.array([[False, False, True], [False, True, True]])
    want = np.array([[1.0, 2.0], [6.0, 7.0]])  # (0+2)/2, (1+3)/2; 6/1, 7/1
    assert np.array_equal((h * ~pad[..., None]).sum(1) / (~pad).sum(1, keepdims=True), want)
    assert np.array_equal(gap_forward(h.reshape(6, 2), 3, (~pad) * 1.0), want)
    assert np.allclose(gap_forward(h.reshape(6, 2), 3, np.ones((2, 3))), h.mean(axis=1),
                       rtol=1e-15, atol=0)


def test_masked_pool_backward_by_finite_differences_and_bad_masks():
    x = RNG.standard_normal((4 * S, E))
    mask, G = padding_mask(LENGTHS, S), RNG.standard_normal((4, E))
    loss = lambda: np.sum(gap_forward(x, S, mask) * G)
    assert rel(gap_backward(G, S, mask), numeric_grad(loss, x)) < 1e-8
    with pytest.raises(ValueError, match="no kept token"):
        gap_forward(x, S, padding_mask([5, 0, 1, 3], S))
    with pytest.raises(ValueError, match="0 and 1"):
        gap_forward(x, S, mask * 0.5)


def test_padded_rows_change_no_logit_and_get_no_gradient():
    params, x = model_params(), padded_inputs()
    mask = padding_mask(LENGTHS, S)
    logits, caches = sequential_forward(MODEL, params, x, mask)
    noisy = x + RNG.standard_normal(x.shape) * (1 - np.repeat(mask, F, axis=1)) * 5
    assert np.allclose(sequential_forward(MODEL, params, noisy, mask)[0], logits,
                       rtol=0, atol=1e-12)
    G = RNG.standard_normal(logits.shape)
    dx, _ = sequential_backward(MODEL, params, caches, G)
    assert np.all(dx[np.repeat(mask, F, axis=1) == 0] == 0.0)
    unmasked, _ = sequential_forward(MODEL, params, x)
    assert not np.allclose(unmasked, logits, atol=1e-3)  # the mask does change the answer


def test_each_sequence_padded_or_alone_gives_the_same_logits():
    params, x = model_params(), padded_inputs()
    logits, _ = sequential_forward(MODEL, params, x, padding_mask(LENGTHS, S))
    for b, n in enumerate(LENGTHS):  # alone in its batch, its padding other values
        alone = np.zeros((1, S * F))
        alone[0, :n * F] = x[b, :n * F]
        alone[0, n * F:] = 3.0
        got, _ = sequential_forward(MODEL, params, alone, padding_mask([n], S))
        assert np.allclose(got, logits[b:b + 1], rtol=0, atol=1e-12), b


def test_masked_model_backward_by_finite_differences():
    params, x = model_params(), padded_inputs()
    mask, labels = padding_mask(LENGTHS, S), LABELS
    logits, caches = sequential_forward(MODEL, params, x, mask)
    _, dlogits = cross_entropy(logits, labels)
    dx, grads = sequential_backward(MODEL, params, caches, dlogits)
    loss = lambda: cross_entropy(sequential_forward(MODEL, params, x, mask)[0], labels)[0]
    want = {name: numeric_grad(loss, params[name]) for name in params}
    assert sorted(grads) == sorted(want)
    assert_grads_close(grads, want, 1e-6)
    assert rel(dx, numeric_grad(loss, x)) < 1e-6


def test_train_step_with_a_mask_lowers_the_loss():
    params, x = model_params(), padded_inputs()
    mask, labels = padding_mask(LENGTHS, S), LABELS
    opt = Adam(lr=0.01)
    losses = [train_step(MODEL, params, opt, x, labels, mask) for _ in range(5)]
    assert losses[-1] < losses[0]


TS_TEXT = """# a comment
@problemName Tiny
@timeStamps false
@missing false
@univariate false
@dimensions 2
@equalLength false
@classLabel true a b
@data
1,2,3:4,5,6:b
7:8:a

0.5,-1e-3:2,3:a
"""


def test_ts_reader_and_padded_storage(tmp_path):
    path = tmp_path / "tiny.ts"
    path.write_text(TS_TEXT)
    X, y, lengths, classes = load_ts(path)
    assert classes == ["a", "b"] and y.tolist() == [1, 0, 0] and lengths.tolist() == [3, 1, 2]
    assert X.tolist() == [[1, 4, 2, 5, 3, 6], [7, 8, 0, 0, 0, 0], [0.5, 2, -1e-3, 3, 0, 0]]
    assert load_ts(path, seq_len=4)[0].shape == (3, 8)
    with pytest.raises(ValueError, match="shorter than the longest"):
        load_ts(path, seq_len=2)


@pytest.mark.parametrize("bad, words", [
    ("1,2:3,4:c\n", "line 10: class 'c'"),
    ("1,2:3:a\n", "line 10: channels of different lengths"),
    ("1,x:3,4:a\n", "line 10: a value that is not a number"),
    ("1,2:a\n", "line 10: 2 channels and a label expected, got 2 fields"),
    ("1,nan:3,4:a\n", "line 10: NaN"),
])
def test_ts_reader_names_the_bad_line(tmp_path, bad, words):
    path = tmp_path / "bad.ts"
    path.write_text(TS_TEXT.split("@data\n")[0] + "@data\n" + bad)
    with pytest.raises(ValueError) as err:
        load_ts(path)
    assert words in str(err.value)


@pytest.mark.parametrize("header, words", [
    ("@dimensions 0\n", "@dimensions must be an int"), ("@missing true\n", "@missing true"),
    ("@data\n", "@data without @classLabel"), ("hello\n", "line 1"),
    ("@classLabel true a\n", "ends before @data"), ("@colour red\n", "unknown .ts header"),
])
def test_ts_reader_names_the_bad_header(tmp_path, header, words):
    path = tmp_path / "bad.ts"
    path.write_text(header)
    with pytest.raises(ValueError, match=words):
        load_ts(path)


def test_vowels_data_its_licence_and_standardisation():
    for name, rows in (("TRAIN", 270), ("TEST", 370)):
        X, y, lengths, classes = load_ts(VOWELS_DIR / ("JapaneseVowels_%s.ts" % name))
        assert len(y) == rows and classes == [str(k) for k in range(1, 10)]
        assert 7 <= lengths.min() and lengths.max() <= 29 and sorted(set(y)) == list(range(9))
    readme = (VOWELS_DIR.parent / "README.md").read_text()
    assert "CC BY 4.0" in readme and "Kudo" in readme
    data = load_vowels()
    X, _, lengths = data["train"]
    mean, std = frame_statistics(X, lengths, 12)
    assert np.allclose(mean, 0, atol=1e-12) and np.allclose(std, 1, atol=1e-12)
    keep = np.repeat(padding_mask(lengths, 29), 12, axis=1)
    assert np.all(X[keep == 0] == 0) and np.all(data["test"][0][
        np.repeat(padding_mask(data["test"][2], 29), 12, axis=1) == 0] == 0)


def test_prefix_accuracy_is_the_causal_model_on_the_cut_utterances():
    """vowels --causal: after half the frames is the model given those frames only (zeros
    after them, their lengths), and after all of them its test accuracy."""
    data = load_vowels()
    config = vowels.causal_config()
    params = init_params(config, 3)
    assert vowels.prefix_accuracy(params, data, config, 1.0) == \
        vowels.test_accuracy(params, data, config)
    X, y, lengths = data["test"]
    cut = np.maximum(1, np.ceil(0.5 * lengths).astype(int))
    X_cut = X.copy()
    for i, n in enumerate(cut):
        X_cut[i, n * vowels.DEVICE.FEATURES:] = 0.0
    cut_data = {"test": (X_cut, y, cut)}
    assert vowels.prefix_accuracy(params, data, config, 0.5) == \
        vowels.test_accuracy(params, cut_data, config)
