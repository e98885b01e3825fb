"""What the saved descriptions of the int8 language model's RMSNorm and DecoderBlock
(decoder.py) must hold (layers_schema.py says what a schema is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend, numbers  # noqa: F401
from .decoder import NORMS, PROJECTIONS
from .layers_schema import Dense
from .numbers import flip


class RMSNorm:
    kind = "RMSNorm"
    FIELDS = {"E": "dim", "eps": "count", "mult": "mult", "s_x": "scale", "s_g": "scale",
              "s_y": "scale"}
    FLOAT = ("E",)

    @staticmethod
    def array_shapes(spec):
        return [("gamma", "b", (spec["E"],), True)]

    @staticmethod
    def spec(layer):
        return {"kind": "RMSNorm", "E": layer.E, "eps": layer.eps, "mult": layer.mult,
                "s_x": layer.s_x, "s_g": layer.s_g, "s_y": layer.s_y}

    @staticmethod
    def arrays(layer, prefix):
        return [(prefix + "gamma", flip(layer.gamma), "b", (layer.E,))]


class DecoderBlock:
    kind = "DecoderBlock"
    FIELDS = {"E": "dim", "H": "dim", "H_kv": "dim", "F": "dim", "seq_len": "dim",
              "rope": "str", "theta": "scale", "parts": "dict", "score": "mult",
              "ctx": "mult", "gate": "mult", "s_silu": "scale", "adds": "adds",
              "s_x": "scale", "s_y": "scale"}
    FLOAT = ("E", "H", "H_kv", "F", "seq_len")

    @staticmethod
    def array_shapes(spec):
        out = [(n + ".gamma", "b", (spec["E"],), True) for n in NORMS]
        for n in PROJECTIONS:
            d = spec["parts"][n]
            out.append((n + ".W", "b", (d["out"], d["in"]), True))
        return out + [("silu", "b", (256,), True)]

    @staticmethod
    def check_spec(where, spec):
        """Each part against its own schema; the sizes of a Llama block of E, H, H_kv, F."""
        from .fields import check_layer_spec

        parts = spec["parts"]
        E, H, H_kv, F = spec["E"], spec["H"], spec["H_kv"], spec["F"]
        if E % H or H % H_kv or (E // H) % 2:
            raise ValueError("%s: E %d, H %d, H_kv %d: H must divide E (an even head_dim), "
                             "H_kv divide H" % (where, E, H, H_kv))
        if spec["rope"] not in ("pairs", "half"):
            raise ValueError("%s: 'rope' must be 'pairs' or 'half', got %r"
                             % (where, spec["rope"]))
        ekv = E // H * H_kv
        sizes = {"wq": (E, E), "wk": (E, ekv), "wv": (E, ekv), "wo": (E, E), "w1": (E, F),
                 "w3": (E, F), "w2": (F, E)}
        for n in NORMS + PROJECTIONS:
            if not isinstance(parts.get(n), dict):
                raise ValueError("%s: 'parts' needs %r" % (where, n))
            check_layer_spec("%s.parts.%s" % (where, n), parts[n], _part_schema(n))
            got = (parts[n]["E"],) if n in NORMS else (parts[n]["in"], parts[n]["out"])
            want = (E,) if n in NORMS else sizes[n]
            if got != want or (n not in NORMS and parts[n]["mult"] is None):
                raise ValueError("%s.parts.%s: sizes %r, the block needs %r and an int8 output"
                                 % (where, n, got, want))

    @staticmethod
    def spec(layer):
        parts = dict((n, _part_schema(n).spec(layer.parts[n])) for n in NORMS + PROJECTIONS)
        return {"kind": "DecoderBlock", "E": layer.E, "H": layer.H, "H_kv": layer.H_kv,
                "F": layer.F, "seq_len": layer.seq_len, "rope": layer.rope, "theta": layer.theta,
                "parts": parts, "score": layer.score, "ctx": layer.ctx_mult, "gate": layer.gate,
                "s_silu": layer.s_silu, "adds": layer.adds, "s_x": layer.s_x, "s_y": layer.s_y}

    @staticmethod
    def arrays(layer, prefix):
        out = []
        for n in NORMS + PROJECTIONS:
            out += _part_schema(n).arrays(layer.parts[n], prefix + n + ".")
        return out + [(prefix + "silu", layer.silu, "b", (256,))]


def _part_schema(name):
    """The schema of a block's part: RMSNorm for a norm, Dense for a projection."""
    return RMSNorm if name in NORMS else Dense
