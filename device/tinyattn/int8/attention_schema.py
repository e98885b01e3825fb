"""What the saved description of an int8 attention (attention.py) must hold (layers_schema.py
says what a schema is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from . import kernels
from .attention import PROJECTIONS


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
