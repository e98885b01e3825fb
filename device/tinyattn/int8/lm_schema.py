"""What the saved descriptions of the int8 language model's Embedding and Classifier (lm.py)
must hold (layers_schema.py says what a schema is)."""


class Embedding:
    kind = "Embedding"
    FIELDS = {"V": "dim", "E": "dim", "s_w": "scale"}
    FLOAT = ("V", "E")

    @staticmethod
    def array_shapes(spec):
        return [("W", "b", (spec["V"], spec["E"]), True)]


class Classifier:
    kind = "Classifier"
    FIELDS = {"E": "dim", "V": "dim", "tied": "bool", "s_x": "scale", "s_w": "scale?"}
    FLOAT = ("E", "V", "tied")
    INT32 = ()  # its logits are always the int32 accumulator

    @staticmethod
    def array_shapes(spec):
        return [] if spec["tied"] else [("W", "b", (spec["V"], spec["E"]), True)]
