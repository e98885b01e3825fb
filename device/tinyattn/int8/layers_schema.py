"""The saved form of each int8 layer of layers.py: what its description must hold (int8/spec.py
checks a description with it before anything is allocated) and what a layer saves (its
description and arrays). A loaded model holds none of it.

A schema, named by the int8 kind: `kind`; `FIELDS`, the description's fields (int8/fields.py);
`FLOAT` (or `float_entry(spec)`), the fields that give its float kind's arguments (a value
that is not a field is itself); `INT32`, where it may keep its int32 accumulator: the path of
the multiplier that is then null; `array_shapes(spec)`, (name, typecode, shape, required) of
the arrays it needs; `check_spec(where, spec)`, where it has one, what the fields say together;
`spec(layer)` and `arrays(layer, prefix)`, a layer's description and its arrays, (name,
buffer, typecode, shape) each, weights as int8 (the layer holds them as offset binary, w + 128,
which the kernels load without a sign step): what the layer's class reads back (from_spec).
"""

from . import kernels
from .numbers import flip

GELU = "gelu_erf"
"""The QActivation name of the GELU table (made from nn/gelu.py's Gelu, the erf form)."""


class Dense:
    kind = "Dense"
    FIELDS = {"in": "dim", "out": "dim", "mult": "mult?", "s_x": "scale", "s_w": "scale",
              "s_y": "scale?", "lo": "lo"}
    FLOAT = ("in", "out")
    INT32 = ("mult",)

    @staticmethod
    def array_shapes(spec):
        return [("W", "b", (spec["out"], spec["in"]), True), ("b", "i", (spec["out"],), False)]

    @staticmethod
    def check_spec(where, spec):
        """An int8 output needs its scale; the accumulator's depth the kernel's bound."""
        if spec["mult"] is not None and spec["s_y"] is None:
            raise ValueError("%s: 's_y' must be a finite number > 0 when 'mult' is given"
                             % where)
        if spec["in"] > kernels.MAX_DEPTH:
            raise ValueError("%s: 'in' %d is over %d (the int32 accumulator could overflow)"
                             % (where, spec["in"], kernels.MAX_DEPTH))

    @staticmethod
    def spec(layer):
        return {"kind": "Dense", "in": layer.in_features, "out": layer.out_features,
                "mult": layer.mult, "s_x": layer.s_x, "s_w": layer.s_w, "s_y": layer.s_y,
                "lo": layer.lo}

    @staticmethod
    def arrays(layer, prefix):
        out = [(prefix + "W", flip(layer.W), "b", (layer.out_features, layer.in_features))]
        if layer.has_bias:
            out.append((prefix + "b", layer.bias(), "i", (layer.out_features,)))
        return out


class Activation:
    kind = "Activation"
    FIELDS = {"name": "str", "s_x": "scale", "s_y": "scale"}
    FLOAT = ("relu",)  # not a field: the value itself (its name says nothing of sizes)

    @staticmethod
    def array_shapes(spec):
        return [("table", "b", (256,), True)]

    @staticmethod
    def check_spec(where, spec):
        """'name': what made the table, a float Activation's kind or the erf GELU."""
        from ..nn.spec import ACTIVATIONS

        names = ACTIVATIONS + (GELU,)
        if spec["name"] not in names:
            raise ValueError("%s: 'name' must be one of %s, got %r"
                             % (where, ", ".join(names), spec["name"]))

    @staticmethod
    def spec(layer):
        return {"kind": "Activation", "name": layer.name, "s_x": layer.s_x, "s_y": layer.s_y}

    @staticmethod
    def arrays(layer, prefix):
        return [(prefix + "table", layer.table, "b", (256,))]


class Tokens:
    kind = "Tokens"
    FIELDS = {"seq_len": "dim", "s_x": "scale"}
    FLOAT = ("seq_len",)

    @staticmethod
    def array_shapes(spec):
        return []

    @staticmethod
    def spec(layer):
        return {"kind": "Tokens", "seq_len": layer.seq_len, "s_x": layer.s_x}

    @staticmethod
    def arrays(layer, prefix):
        return []


class GlobalAvgPool:
    kind = "GlobalAvgPool"
    FIELDS = {"seq_len": "dim", "mult": "mult", "s_x": "scale", "s_y": "scale",
              "by_count": "list"}
    FLOAT = ("seq_len",)

    @staticmethod
    def array_shapes(spec):
        return []

    @staticmethod
    def check_spec(where, spec):
        """'by_count': one multiplier for each count 1..seq_len of kept tokens."""
        if len(spec["by_count"]) != spec["seq_len"]:
            raise ValueError("%s: 'by_count' must hold seq_len (%d) multipliers, got %d"
                             % (where, spec["seq_len"], len(spec["by_count"])))
        for mult in spec["by_count"]:
            if not isinstance(mult, list) or len(mult) != 4:
                raise ValueError("%s: 'by_count' must be [m, s, p, cap] lists, got %r"
                                 % (where, mult))
            try:
                kernels.set_multiplier(kernels.new_header(8, None), mult)
            except (TypeError, ValueError) as err:
                raise ValueError("%s: 'by_count': %s" % (where, err))

    @staticmethod
    def spec(layer):
        spec = {"kind": "GlobalAvgPool", "seq_len": layer.seq_len, "mult": layer.mult,
                "s_x": layer.s_x, "s_y": layer.s_y}
        if layer.mults is not None:
            spec["by_count"] = [list(m) for m in layer.mults]
        return spec

    @staticmethod
    def arrays(layer, prefix):
        return []
