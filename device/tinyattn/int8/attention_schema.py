"""What the saved description of an int8 attention (attention.py) must hold (layers_schema.py
says what a schema is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from . import kernels
from .attention import PROJECTIONS
from .numbers import flip


class SelfAttention:
    kind = "SelfAttention"
    FIELDS = {"E": "dim", "H": "dim", "H_kv": "dim-", "seq_len": "dim?", "bias": "list",
              "mults": {"q": "mult", "k": "mult", "v": "mult", "score": "mult", "ctx": "mult",
                        "out": "mult?"},
              "scales": {"x": "scale", "q": "scale", "k": "scale", "v": "scale", "ctx": "scale",
                         "wq": "scale", "wk": "scale", "wv": "scale", "wo": "scale",
                         "y": "scale?"}}
    FLOAT = ("E", "H", "seq_len")
    INT32 = ("mults", "out")

    @staticmethod
    def array_shapes(spec):
        E = spec["E"]
        E_kv = (spec.get("H_kv") or spec["H"]) * (E // spec["H"]) if spec["H"] else E
        rows = dict((n, E_kv if n in ("k", "v") else E) for n in PROJECTIONS)
        return [("W" + n, "b", (rows[n], E), True) for n in PROJECTIONS] + [
            ("b" + n, "i", (rows[n],), n in spec["bias"]) for n in PROJECTIONS]

    @staticmethod
    def check_spec(where, spec):
        """What FIELDS cannot say of a description (at `where`); ValueError naming the field."""
        if spec["E"] % spec["H"]:
            raise ValueError("%s: 'E' (%d) must be a multiple of 'H' (%d)"
                             % (where, spec["E"], spec["H"]))
        if spec["H"] % (spec.get("H_kv") or spec["H"]):
            raise ValueError("%s: 'H_kv' (%d) must divide 'H' (%d)"
                             % (where, spec["H_kv"], spec["H"]))
        from ..link.wire import MAX_SEQ_LEN  # (its heap only for a check)

        if spec["seq_len"] is not None and spec["seq_len"] > MAX_SEQ_LEN:
            raise ValueError("%s: 'seq_len' %d is over %d" % (where, spec["seq_len"], MAX_SEQ_LEN))
        for name in spec["bias"]:
            if name not in PROJECTIONS:
                raise ValueError("%s: 'bias' lists q, k, v, o, got %r" % (where, name))
        if spec["mults"]["out"] is not None and spec["scales"]["y"] is None:
            raise ValueError("%s: 'scales.y' must be a finite number > 0 when 'mults.out' is "
                             "given" % where)
        if spec["E"] // spec["H"] > kernels.MAX_DEPTH:
            raise ValueError("%s: a head of %d values is over %d"
                             % (where, spec["E"] // spec["H"], kernels.MAX_DEPTH))

    @staticmethod
    def spec(layer):
        spec = {"kind": "SelfAttention", "E": layer.embed_dim, "H": layer.num_heads,
                "seq_len": layer.seq_len, "mults": layer.mults, "scales": layer.scales,
                "bias": list(layer._bias)}
        if layer._h_kv is not None:
            spec["H_kv"] = layer._h_kv
        return spec

    @staticmethod
    def arrays(layer, prefix):
        E = layer.embed_dim
        out = [(prefix + "W" + n, flip(layer.weights[n]), "b", (layer.rows_of(n), E))
               for n in PROJECTIONS]
        biases = [(n, layer.bias(n)) for n in PROJECTIONS]
        out += [(prefix + "b" + n, b, "i", (layer.rows_of(n),))
                for n, b in biases if b is not None]
        return out
