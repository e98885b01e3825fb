"""Calibration and loss arguments that are wrong: each is a ValueError naming the argument
and what it must be (not ulab's or MicroPython's own words, such as "attempt to get
(arg)min/(arg)max of empty sequence" or "can't convert NaN to int")."""

import check
from tinyattn import Attention, Dense, Sequential, Tokens, cross_entropy, iris_model
from tinyattn.int8 import quantize
from ulab import numpy as np

INF, NAN = float("inf"), float("nan")


def ones(shape):
    return np.zeros(shape) + 1.0


def with_value(shape, row, col, value):
    x = ones(shape)
    x[row, col] = value
    return x


def named(call, words, what):
    """`call` raises ValueError itself (no subclass) whose message holds every one of words."""
    try:
        call()
    except ValueError as err:
        message = str(err)
        missing = [word for word in words if word not in message]
        if type(err) is not ValueError or missing:
            return "%s: %s(%r) lacks %r" % (what, type(err).__name__, message, missing)
        return None
    except Exception as err:
        return "%s: %s(%r), not a ValueError" % (what, type(err).__name__, str(err))
    return "%s: no error" % what


def every(cases):
    wrong = [w for w in (named(call, words, what) for what, call, words in cases) if w]
    if wrong:
        raise AssertionError("; ".join(wrong))


def test_quantize_names_a_bad_calibration_set():
    model = iris_model(3)
    cx = "calibration_x"
    every([
        ("0 rows", lambda: quantize(model, np.zeros((0, 4))), (cx, "at least 1 row")),
        ("a NaN", lambda: quantize(model, with_value((5, 4), 3, 1, NAN)), (cx, "NaN or infinity")),
        ("inf", lambda: quantize(model, with_value((5, 4), 0, 0, INF)), (cx, "NaN or infinity")),
        ("-inf", lambda: quantize(model, with_value((5, 4), 4, 3, -INF)), (cx, "NaN or infinity")),
        ("5 columns", lambda: quantize(model, ones((3, 5))), (cx, "4 columns", "got 5")),
        ("1-D", lambda: quantize(model, np.zeros(4)), (cx, "2-D")),
        ("a list", lambda: quantize(model, [[0.0] * 4]), (cx, "2-D")),
        ("None", lambda: quantize(model, None), (cx, "2-D")),
        ("uint8", lambda: quantize(model, np.zeros((3, 4), dtype=np.uint8)), (cx, "float")),
    ])


def test_quantize_names_the_calibration_width_of_each_first_layer():
    attention = Attention(8, 2, seed=1)
    tokens = Sequential([Tokens(4), Dense(3, 5, seed=2)])
    every([
        ("attention, 6 columns", lambda: quantize(attention, ones((4, 6)), seq_len=4),
         ("calibration_x", "8 columns")),
        ("attention, seq_len '4'", lambda: quantize(attention, ones((4, 8)), seq_len="4"),
         ("seq_len", "int >= 1")),
        ("attention, seq_len 0", lambda: quantize(attention, ones((4, 8)), seq_len=0),
         ("seq_len", "int >= 1")),
        ("tokens, 10 columns", lambda: quantize(tokens, ones((2, 10))),
         ("calibration_x", "12 columns")),
        ("dense, a NaN", lambda: quantize(Dense(3, 2, seed=1), with_value((2, 3), 1, 2, NAN)),
         ("calibration_x", "NaN or infinity")),
    ])
    quantize(tokens, ones((2, 12)))  # the width it names is the one it takes


def test_quantize_names_the_layer_whose_outputs_overflow():
    dense = Dense(4, 3, seed=1)
    dense.W[:] = ones(dense.W.shape) * 3e38  # (maximum float32 is 3.4e38): sums of 4 overflow
    model = Sequential([dense])
    every([("overflow", lambda: quantize(model, ones((2, 4))),
            ("layer 0 (Dense)", "NaN or infinity", "calibration_x"))])


def test_quantize_refuses_a_language_models_layer_outside_one():
    """An RMSNorm or a DecoderBlock after a Dense (no Embedding first): their int8 classes run
    a position at a time (no plan), so a planned model cannot hold them."""
    from tinyattn import DecoderBlock, RMSNorm

    norm = Sequential([Dense(4, 8, seed=1), RMSNorm(8)])
    block = Sequential([Dense(4, 8, seed=1), DecoderBlock(8, 2, 1, 12, 4)])
    words = ("quantized with its language model", "an Embedding first", "token_ids")
    every([("RMSNorm", lambda: quantize(norm, ones((2, 4))), ("a RMSNorm layer",) + words),
           ("DecoderBlock", lambda: quantize(block, ones((3, 4))),
            ("a DecoderBlock layer",) + words)])


def test_quantize_refuses_a_planned_models_layer_inside_a_language_model():
    """A Dense between the Embedding and the Classifier: its int8 class runs a planned batch,
    not one position at a time."""
    from tinyattn import Classifier, Embedding

    model = Sequential([Embedding(6, 4, seed=1), Dense(4, 4, seed=2), Classifier(4, 6, seed=3)])
    every([("Dense", lambda: quantize(model, [1, 2, 3]),
            ("cannot quantize a Dense layer of a language model",))])


def test_cross_entropy_names_bad_logits_and_labels():
    z = ones((4, 3))
    seq = "labels must be a sequence of 4 class indices (ints in 0..2)"
    every([
        ("labels None", lambda: cross_entropy(z, None), (seq, "NoneType")),
        ("labels 5", lambda: cross_entropy(z, 5), (seq, "int")),
        ("3 labels", lambda: cross_entropy(z, [0, 1, 2]), ("3 entries", "4 rows", seq)),
        ("a NaN label", lambda: cross_entropy(z, [0, 1, NAN, 0]), ("label nan", "row 2", "0..2")),
        ("an inf label", lambda: cross_entropy(z, [0, INF, 1, 0]), ("label inf", "row 1")),
        ("a str label", lambda: cross_entropy(z, [0, 1, 2, "2"]), ("label '2'", "row 3")),
        ("1.5", lambda: cross_entropy(z, [0, 1.5, 2, 0]), ("label 1.5", "row 1")),
        ("logits None", lambda: cross_entropy(None, [0]), ("logits", "2-D")),
        ("logits 1-D", lambda: cross_entropy(np.zeros(3), [0]), ("logits", "2-D")),
        ("0 rows", lambda: cross_entropy(np.zeros((0, 3)), []), ("logits", "at least 1 row")),
        ("uint8 logits", lambda: cross_entropy(np.zeros((2, 3), dtype=np.uint8), [0, 1]),
         ("logits", "float")),
    ])
    loss, _ = cross_entropy(z, [0, 1, 2.0, 0])  # an integral float is a class index
    check.close_each(loss, 1.0986123, rtol=1e-5, what="log(3)")


def test_the_int8_model_names_non_finite_input():
    qm = quantize(iris_model(3), ones((4, 4)))
    every([
        ("inf", lambda: qm.forward(with_value((2, 4), 1, 1, INF)), ("NaN",)),
        ("-inf", lambda: qm.forward(with_value((2, 4), 0, 3, -INF)), ("NaN",)),
        ("5 columns", lambda: qm.forward(ones((2, 5))), ("5 columns", "4")),
    ])
