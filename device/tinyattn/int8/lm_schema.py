"""What the saved descriptions of the int8 language model's Embedding and Classifier (lm.py)
must hold (layers_schema.py says what a schema is)."""

from .numbers import flip


class Embedding:
    kind = "Embedding"
    FIELDS = {"V": "dim", "E": "dim", "s_w": "scale"}
    FLOAT = ("V", "E")

    @staticmethod
    def array_shapes(spec):
        return [("W", "b", (spec["V"], spec["E"]), True)]

    @staticmethod
    def spec(layer):
        return {"kind": "Embedding", "V": layer.num_embeddings, "E": layer.E, "s_w": layer.s_w}

    @staticmethod
    def arrays(layer, prefix):
        return [(prefix + "W", flip(layer.W), "b", (layer.num_embeddings, layer.E))]


class Classifier:
    kind = "Classifier"
    FIELDS = {"E": "dim", "V": "dim", "tied": "bool", "s_x": "scale", "s_w": "scale?"}
    FLOAT = ("E", "V", "tied")
    INT32 = ()  # its logits are always the int32 accumulator

    @staticmethod
    def array_shapes(spec):
        return [] if spec["tied"] else [("W", "b", (spec["V"], spec["E"]), True)]

    @staticmethod
    def spec(layer):
        spec = {"kind": "Classifier", "E": layer.E, "V": layer.V, "tied": layer.tied,
                "s_x": layer.s_x, "s_w": layer.s_w}
        if layer.tied:
            spec["s_w"] = None
        return spec

    @staticmethod
    def arrays(layer, prefix):
        return [] if layer.tied else [(prefix + "W", flip(layer.W), "b", (layer.V, layer.E))]
