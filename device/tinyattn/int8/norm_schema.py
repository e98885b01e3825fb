"""What the saved description of each int8 layer of norm.py must hold (layers_schema.py says
what a schema is)."""

from .numbers import flip


class LayerNorm:
    kind = "LayerNorm"
    FIELDS = {"E": "dim", "eps": "count", "mult": "mult", "s_x": "scale", "s_g": "scale",
              "s_y": "scale"}
    FLOAT = ("E",)

    @staticmethod
    def array_shapes(spec):
        return [("gamma", "b", (spec["E"],), True), ("beta", "i", (spec["E"],), True)]

    @staticmethod
    def spec(layer):
        return {"kind": "LayerNorm", "E": layer.E, "eps": layer.eps, "mult": layer.mult,
                "s_x": layer.s_x, "s_g": layer.s_g, "s_y": layer.s_y}

    @staticmethod
    def arrays(layer, prefix):
        return [(prefix + "gamma", flip(layer.gamma), "b", (layer.E,)),
                (prefix + "beta", layer.beta(), "i", (layer.E,))]


class PositionalEmbedding:
    kind = "PositionalEmbedding"
    FIELDS = {"seq_len": "dim", "E": "dim", "mults": "add", "s_x": "scale", "s_p": "scale",
              "s_y": "scale"}
    FLOAT = ("seq_len", "E")

    @staticmethod
    def array_shapes(spec):
        return [("P", "b", (spec["seq_len"], spec["E"]), True)]

    @staticmethod
    def spec(layer):
        return {"kind": "PositionalEmbedding", "seq_len": layer.seq_len, "E": layer.E,
                "mults": layer.mults, "s_x": layer.s_x, "s_p": layer.s_p, "s_y": layer.s_y}

    @staticmethod
    def arrays(layer, prefix):
        return [(prefix + "P", layer.P, "b", (layer.seq_len, layer.E))]
