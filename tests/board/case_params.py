"""Every layer kind builds the parameters its declaration (nn/spec.py) says it has: names,
shapes, order; a bad config entry gets an error naming it."""

import check
from tinyattn.nn import spec as params
from tinyattn.nn.layer import build
from tinyattn.rng import Rng


def test_built_layers_have_the_stated_parameters():
    for spec in check.fixture("specs")["specs"]:
        layer = build(spec, Rng(1))
        got = [(name, tuple(p.shape), tuple(g.shape)) for name, p, g in layer.collect_params()]
        want = [(name, tuple(shape), tuple(shape)) for name, shape in params.layer_shapes(spec)]
        if got != want:
            raise AssertionError("%r: built %r, params says %r" % (spec, got, want))


def test_bad_entries_are_named():
    for spec, words in check.fixture("specs")["bad"]:
        text = check.raises(ValueError, params.model_shapes, [["Tokens", 2], spec])
        for word in ["config entry 1"] + words:
            if word not in text:
                raise AssertionError("%r: %r not in %r" % (spec, word, text))
