"""What the saved description of each int8 layer of norm.py must hold (layers_schema.py says
what a schema is)."""


class LayerNorm:
    kind = "LayerNorm"
    FIELDS = {"E": "dim", "eps": "count", "mult": "mult", "s_x": "scale", "s_g": "scale",
              "s_y": "scale"}
    FLOAT = ("E",)

    @staticmethod
    def array_shapes(spec):
        return [("gamma", "b", (spec["E"],), True), ("beta", "i", (spec["E"],), True)]


class PositionalEmbedding:
    kind = "PositionalEmbedding"
    FIELDS = {"seq_len": "dim", "E": "dim", "mults": "add", "s_x": "scale", "s_p": "scale",
              "s_y": "scale"}
    FLOAT = ("seq_len", "E")

    @staticmethod
    def array_shapes(spec):
        return [("P", "b", (spec["seq_len"], spec["E"]), True)]
