"""quantize calibrates batch by batch: the same int8 model, every integer, for any batch_size
(tests/device/test_inference_memory.py)."""

import check
from tinyattn import Attention
from tinyattn.datasets.digits import digits_model
from tinyattn.int8 import quantize
from tinyattn.rng import Rng


def rows(n, cols, seed=1):
    return Rng(seed).uniform_matrix(n, cols, -2.0, 2.0)


def _integers(qmodel):
    """Every number of an int8 model: its description and the bytes of each array."""
    return qmodel.description(), [(name, bytes(buf), code, shape)
                                  for name, buf, code, shape in qmodel.named_arrays()]


def test_quantize_in_batches_gives_the_one_pass_model_bit_for_bit():
    model, x = digits_model(7), rows(20, 64, seed=3)
    one = _integers(quantize(model, x, batch_size=20))
    assert _integers(quantize(model, x, batch_size=3)) == one, "digits, batch_size 3"
    assert _integers(quantize(model, x)) == one, "digits, the default batch_size"
    attention, tokens = Attention(8, 2, seed=4), rows(20, 8, seed=5)  # 5 sequences of 4
    one = _integers(quantize(attention, tokens, seq_len=4, batch_size=5))
    assert _integers(quantize(attention, tokens, seq_len=4, batch_size=2)) == one, \
        "Attention, batch_size 2 (8 token rows)"


def test_quantize_batch_size_is_checked():
    model, x = digits_model(7), rows(4, 64)
    for bad in (0, -1, 2.0, True, None):
        message = check.message(ValueError, quantize, model, x, batch_size=bad)
        assert "batch_size" in message, "batch_size=%r: %r" % (bad, message)
