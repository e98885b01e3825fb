"""LOAD_QMODEL's check of an int8 description (qcheck), for every kind of int8 layer: what
a model gives as its description loads back; each broken field is named."""

import json

import check
from tinyattn.int8 import convert as quant, model_load as qcheck
from tinyattn.nn.sequential import Sequential
from ulab import numpy as np

CONFIG = [
    ["Tokens", 4], ["Dense", 2, 8, True], ["PositionalEmbedding", 4, 8],
    ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", True, 1e-5, 4, False],
    ["SelfAttention", 8, 2, 4], ["GlobalAvgPool", 4], ["Dense", 8, 3], ["Activation", "relu"],
]


def _model():
    """An int8 model with every kind, its description as JSON gives it, its arrays."""
    x = np.array([[((i * 7 + j * 3) % 11) / 5.0 - 1.0 for j in range(8)] for i in range(6)])
    q = quant.quantize(Sequential.from_config(CONFIG, seed=2), x)
    layers = json.loads(json.dumps(q.description()["layers"]))
    arrays = dict((name, (buf, code, tuple(shape))) for name, buf, code, shape in q.named_arrays())
    return q, layers, arrays, x


def test_a_description_loads_back_and_answers_the_same():
    q, layers, arrays, x = _model()
    again = qcheck.qmodel_from(layers, arrays)
    check.equal([l.kind for l in again.layers], [l.kind for l in q.layers], "kinds")
    check.equal(again.forward(x), q.forward(x), "forward of the loaded model")


def _broken(change):
    q, layers, arrays, x = _model()
    change(layers)
    return check.raises(ValueError, qcheck.qmodel_from, layers, arrays)


def _named(text, *words):
    for word in words:
        if word not in text:
            raise AssertionError("%r not in %r" % (word, text))


def test_each_broken_field_is_named():
    def dense_lo(layers):
        layers[1]["lo"] = 5
    _named(_broken(dense_lo), "layers[1]", "'lo'", "-128 or 0")

    def add(layers):
        layers[3]["adds"][1] = [1, 2]
    _named(_broken(add), "layers[3]", "'adds'")

    def part_kind(layers):
        layers[3]["parts"]["norm1"]["kind"] = "Dense"
    _named(_broken(part_kind), "layers[3].parts.norm1", "'kind' must be 'LayerNorm'")

    def lost_part(layers):
        del layers[3]["parts"]["linear2"]
    _named(_broken(lost_part), "layers[3]", "lacks 'linear2'")

    def extra_part(layers):
        layers[3]["parts"]["conv"] = {}
    _named(_broken(extra_part), "layers[3]", "'conv'")

    def attention_scale(layers):
        layers[3]["parts"]["self_attn"]["scales"]["wq"] = -1
    _named(_broken(attention_scale), "layers[3].parts.self_attn.scales", "'wq'")

    def positional(layers):
        layers[2]["mults"] = [40000, 1, 3]
    _named(_broken(positional), "layers[2]", "'mults'")

    def heads(layers):
        layers[4]["H"] = 3
    _named(_broken(heads), "layers[4]", "multiple of 'H'")

    def kind(layers):
        layers[0]["kind"] = "Conv"
    _named(_broken(kind), "layers[0]", "'kind' must be one of", "TransformerEncoderLayer")
