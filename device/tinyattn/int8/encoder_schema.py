"""What the saved description of an int8 encoder layer (encoder.py) must hold: its fields,
and each part's against that part's schema (layers_schema.py says what a schema is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from .attention_schema import SelfAttention
from .encoder import PARTS
from .layers_schema import Activation, Dense
from .norm_schema import LayerNorm

_PART_SCHEMAS = {"self_attn": SelfAttention, "linear1": Dense, "act": Activation,
                 "linear2": Dense, "norm1": LayerNorm, "norm2": LayerNorm}


class TransformerEncoderLayer:
    kind = "TransformerEncoderLayer"
    FIELDS = {"seq_len": "dim", "norm_first": "bool", "causal": "bool", "adds": "adds",
              "s_x": "scale", "s_y": "scale", "parts": "dict"}

    @staticmethod
    def float_entry(spec):
        """The float config entry of its sizes (int8/spec.py follows it, nn/flow.py)."""
        attn = spec["parts"]["self_attn"]
        return ["TransformerEncoderLayer", attn["E"], attn["H"], spec["parts"]["linear1"]["out"],
                0.0, "relu", False, 1e-5, spec["seq_len"]]

    @staticmethod
    def array_shapes(spec):
        return [(name + "." + n, code, shape, required) for name in PARTS
                if name in spec["parts"]
                for n, code, shape, required
                in _PART_SCHEMAS[name].array_shapes(spec["parts"][name])]

    @staticmethod
    def check_spec(where, spec):
        """Each part's description against its int8 layer's FIELDS (act only for GELU)."""
        from .fields import check_layer_spec  # (its heap only for a check)

        for name in spec["parts"]:
            if name not in _PART_SCHEMAS:
                raise ValueError("%s: 'parts' has %r; its parts are %s"
                                 % (where, name, ", ".join(PARTS)))
        for name in PARTS:
            if name in spec["parts"]:
                check_layer_spec(where + ".parts." + name, spec["parts"][name],
                                 _PART_SCHEMAS[name])
            elif name != "act":
                raise ValueError("%s: 'parts' lacks %r" % (where, name))
        p = spec["parts"]
        E, F = p["self_attn"]["E"], p["linear1"]["out"]
        for field, value, want in (
                ("self_attn.seq_len", p["self_attn"]["seq_len"], spec["seq_len"]),
                ("linear1.in", p["linear1"]["in"], E), ("linear2.in", p["linear2"]["in"], F),
                ("linear2.out", p["linear2"]["out"], E), ("norm1.E", p["norm1"]["E"], E),
                ("norm2.E", p["norm2"]["E"], E),
                ("self_attn.mults.out", p["self_attn"]["mults"]["out"] is None, False),
                ("linear1.mult", p["linear1"]["mult"] is None, False),
                ("linear2.mult", p["linear2"]["mult"] is None, False)):
            if value != want:
                raise ValueError("%s: 'parts.%s' must be %s, got %r" % (
                    where, field, "given (an int8 output)" if want is False else want,
                    None if want is False else value))

    @staticmethod
    def spec(layer):
        return {"kind": "TransformerEncoderLayer", "seq_len": layer.seq_len,
                "norm_first": layer.norm_first, "causal": layer.causal,
                "adds": [list(a) for a in layer.adds], "s_x": layer.s_x, "s_y": layer.s_y,
                "parts": dict((n, _PART_SCHEMAS[n].spec(part))
                              for n, part in layer.parts.items() if part is not None)}

    @staticmethod
    def arrays(layer, prefix):
        out = []
        for name in PARTS:
            if layer.parts[name] is not None:
                out += _PART_SCHEMAS[name].arrays(layer.parts[name], prefix + name + ".")
        return out
