"""Every layer kind, from its one declaration (tinyattn/nn/spec.py): each device consumer
knows it, every constructor argument survives save -> load, an Activation saved as "gelu"
loads as gelu_tanh, and a kind declared here, in this file, is known everywhere."""

import tinyattn

import check
from tinyattn import Sequential, load, save
from tinyattn.int8.classes import companion, int8_class
from tinyattn.int8.spec import layer_kind
from tinyattn.nn.arguments import dim
from tinyattn.nn.flow import follow
from tinyattn.nn.layer import Layer, build, layer_class
from tinyattn.nn.spec import (KINDS, MODULE, REQUIRED, STREAM, declare, layer_shapes,
                              model_shapes, module_of)
from tinyattn.nn.stream import Stream
from tinyattn.rng import Rng
from tinyattn.store import SEQUENTIAL, check_arrays, write_file
from ulab import numpy as np


def test_every_kind_is_known_to_every_consumer():
    entries = check.fixture("kinds")["entries"]
    check.equal(sorted(KINDS), sorted(entries), "the kinds the host's copy declares")
    for kind, entry in entries.items():
        cls = layer_class(kind)
        assert getattr(tinyattn, kind) is cls, "tinyattn.%s is not its class" % kind
        assert "tinyattn." + tinyattn.LAZY.get(kind, "?") == module_of(KINDS[kind][MODULE],
                                                                      "tinyattn.nn"), \
            "LAZY does not name %s's module" % kind
        layer = build(entry, Rng(1))
        check.equal(layer.config(), entry, kind + " config()")
        shapes = [(name, tuple(p.shape)) for name, p, _ in layer.collect_params()]
        check.equal(shapes, [(n, tuple(s)) for n, s in layer_shapes(entry)], kind + " parameters")
        check_arrays([entry], dict(("0." + n, s) for n, s in shapes))
        q = int8_class(KINDS[kind])
        if kind in check.fixture("kinds").get("no_int8", ()):
            assert q is None, "%s has an int8 class: take it off no_int8" % kind
            continue
        assert q is not None, "%s has no int8 class" % kind
        # a language model's kinds run a position at a time (forward, a block's step), as
        # tinyattn.generate steps a float one; the others are planned, then run
        steps = (LANGUAGE_MODEL_KINDS[kind],) if kind in LANGUAGE_MODEL_KINDS else ("plan", "run")
        for part in ("kind", "from_spec") + steps:
            assert hasattr(q, part), "%s's int8 class has no %s" % (kind, part)
        schema, conversion = companion(q, "schema"), companion(q, "convert")
        for part in ("kind", "FIELDS", "array_shapes", "spec", "arrays"):
            assert hasattr(schema, part), "%s's int8 schema has no %s" % (kind, part)
        assert schema.kind == q.kind, "%s's schema is of kind %r" % (kind, schema.kind)
        assert hasattr(conversion, "quantize"), "%s's int8 conversion has no quantize" % kind
        assert layer_kind(q.kind) is q, "saved int8 kind %r is not %s's" % (q.kind, kind)


LANGUAGE_MODEL_KINDS = {"Embedding": "forward", "RMSNorm": "forward", "DecoderBlock": "step",
                        "Classifier": "forward"}


def test_every_kind_round_trips_with_non_default_arguments():
    """Each kind a model of its own (a tied Classifier after the Embedding whose weights it
    takes): save refuses layers that do not fit together."""
    for i, entry in enumerate(check.fixture("kinds")["entries"].values()):
        before = [["Embedding", 7, 4]] if entry[0] == "Classifier" and entry[-1] is True else []
        model = Sequential([build(e, Rng(i)) for e in before + [entry]])
        for j, (_, param, _) in enumerate(model.collect_params()):
            param += 0.25 * (j + 1)  # not the values a fresh build has
        save(model, check.path("kinds.bin"))
        again = load(check.path("kinds.bin"))
        check.equal(again.config(), before + [entry], "config")
        for (name, want, _), (_, got, _) in zip(model.collect_params(), again.collect_params()):
            check.equal(got, want, entry[0] + " " + name)


def test_layer_norm_with_an_int_eps_saves_and_loads():
    model = Sequential([tinyattn.LayerNorm(4, 1)])
    save(model, check.path("norm.bin"))
    check.equal(load(check.path("norm.bin")).config(), [["LayerNorm", 4, 1]], "config")


def test_an_activation_saved_as_gelu_loads_as_gelu_tanh():
    x = np.array([[-2.0, -0.5, 0.0, 0.5, 2.0]])
    write_file(check.path("gelu.bin"), SEQUENTIAL, {"config": [["Activation", "gelu"]]}, [])
    model = load(check.path("gelu.bin"))
    check.equal(model.config(), [["Activation", "gelu_tanh"]], "config")
    check.equal(model.forward(x), tinyattn.Activation("gelu_tanh").forward(x), "the tanh form")


class Scale(Layer):
    """The toy kind of docs/layer-kinds.md: y = x * s, s (features,) starts at 1."""

    PARAMS = ("s",)  # Layer.collect_params gives (name, param, grad); grads on first need

    def __init__(self, *args, **named):
        self.features, = self.arguments(args, named)
        self.s = np.zeros(self.features) + 1.0  # ds: made on first need (Layer.PARAMS)
        self.x = None

    def forward(self, x, training=False):
        self.x = x
        return x * self.s

    def backward(self, grad_out):
        self.collect_params()  # makes self.ds, zeros, the first time
        self.ds += np.sum(grad_out * self.x, axis=0)
        return grad_out * self.s



def test_a_kind_declared_here_is_known_everywhere():
    declare("Scale", "case_kinds", ("features", dim, REQUIRED), lambda n: [("s", (n,))],
            flow=(("features", 0),), stream="row")
    try:
        assert tinyattn.Scale is Scale, "tinyattn.Scale is %r" % (tinyattn.Scale,)
        config = [["Dense", 4, 3, True], ["Scale", 3]]
        check.equal(model_shapes(config), [("0.W", (3, 4)), ("0.b", (3,)), ("1.s", (3,))],
                    "parameter shapes")
        model = Sequential.from_config(config, seed=1)
        model.layers[1].s += np.array([0.5, 2.0, -1.0])
        save(model, check.path("toy.bin"))
        again = load(check.path("toy.bin"))
        check.equal(again.config(), config, "config")
        check.equal(again.layers[1].s, model.layers[1].s, "s")
        x = np.array([[1.0, 2.0, 3.0, 4.0]])
        check.equal(again.forward(x), model.forward(x), "forward")
        text = check.raises(ValueError, Sequential.from_config, [["Scale", 0]])
        assert "features must be an int >= 1" in text, text
        check.equal(follow(config), (4, 1, (1, 3)), "the shapes followed through Scale")
        check.equal(Stream(model, 2).step(x), model.forward(x), "a stream's step (role row)")
        KINDS["Scale"] = KINDS["Scale"][:STREAM] + (None,)  # no stream role: refused
        text = check.raises(ValueError, Stream, model, 2)
        assert "a stream cannot run a Scale layer" in text, text
        text = check.raises(ValueError, follow, [["Dense", 4, 3, True], ["Scale", 5]])
        assert "layer 1 (Scale): features 5, but the rows it gets have 3" in text, text
    finally:
        del KINDS["Scale"]
