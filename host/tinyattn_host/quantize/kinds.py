"""Each layer kind's quantize on the host, the twin of its int8 class's quantize on the board:
quantize(spec, p, stats, s_x, s_y, prefix) -> (its int8 layer's description, its arrays named
prefix + name). A kind's declaration (reference/*.py, `quantize=`) names its function here.

s_y None is the model's last layer: a Dense, SelfAttention or Tokens keeps what it has (the
int32 accumulator, its input), the others take their output's scale from the statistics."""

from functools import partial

from ..reference.encoder import gelu_forward
from ..reference.layers import activation_forward
from .encoder import encoder
from .layers import GELU, activation, attention, attention_params, dense, layernorm, positional
from .numbers import multiplier, over, scale_for


def _own(s_y, stats):
    """s_y, or the scale of the layer's output where it is the model's last."""
    return s_y or scale_for(stats["out"])


def quantize_dense(spec, p, stats, s_x, s_y, prefix):
    return dense(p["W"], p.get("b"), s_x, s_y, prefix=prefix)


def quantize_tokens(spec, p, stats, s_x, s_y, prefix):
    return {"kind": "Tokens", "seq_len": spec[1], "s_x": s_x}, {}


def quantize_attention(spec, p, stats, s_x, s_y, prefix):
    return attention(attention_params(p), stats, spec[2], spec[3], s_x, s_y, prefix)


def quantize_activation(spec, p, stats, s_x, s_y, prefix):
    s_y = s_x if spec[1] == "relu" else _own(s_y, stats)  # relu: exact
    return activation(spec[1], partial(activation_forward, kind=spec[1]), s_x, s_y, prefix)


def quantize_pool(spec, p, stats, s_x, s_y, prefix):
    s_y = _own(s_y, stats)
    mults = [multiplier(over(s_x, n), s_y) for n in range(1, spec[1] + 1)]
    return {"kind": "GlobalAvgPool", "seq_len": spec[1], "mult": mults[-1], "s_x": s_x,
            "s_y": s_y, "by_count": mults}, {}


def quantize_layernorm(spec, p, stats, s_x, s_y, prefix):
    return layernorm(p["gamma"], p["beta"], spec[2], s_x, _own(s_y, stats), prefix)


def quantize_positional(spec, p, stats, s_x, s_y, prefix):
    return positional(p["P"], s_x, _own(s_y, stats), prefix)


def quantize_gelu(spec, p, stats, s_x, s_y, prefix):
    return activation(GELU, gelu_forward, s_x, _own(s_y, stats), prefix)


def quantize_encoder(spec, p, stats, s_x, s_y, prefix):
    return encoder(spec, p, stats, s_x, _own(s_y, stats), prefix)
