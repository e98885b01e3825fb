"""An int8 model from a description sent by a host, checked field by field (LOAD_QMODEL).

The description is what QSequential's layers give as spec(); the arrays are checked against
what the built model holds (layer.arrays()): the same names, typecodes and shapes, nothing
left over. Every problem is a ValueError naming the layer and the field or array.
"""

from .wire import MAX_MESSAGE, MAX_SEQ_LEN

_FIELDS = {  # kind: {field: what it must be}; "?" allows null
    "Dense": {"in": "dim", "out": "dim", "mult": "mult?", "s_x": "scale", "s_w": "scale",
              "s_y": "scale?"},
    "Activation": {"name": "str", "s_x": "scale", "s_y": "scale"},
    "Tokens": {"seq_len": "dim", "s_x": "scale"},
    "GlobalAvgPool": {"seq_len": "dim", "mult": "mult", "s_x": "scale", "s_y": "scale"},
    "SelfAttention": {"E": "dim", "H": "dim", "seq_len": "dim?", "mults": "dict",
                      "scales": "dict", "bias": "list"},
}
_ATTENTION_MULTS = {"q": "mult", "k": "mult", "v": "mult", "score": "mult", "ctx": "mult",
                    "out": "mult?"}
_ATTENTION_SCALES = dict((n, "scale") for n in ("x", "q", "k", "v", "ctx", "wq", "wk", "wv",
                                                 "wo"))
_ATTENTION_SCALES["y"] = "scale?"


def qmodel_from(layers, arrays):
    """A QSequential from layer descriptions and {name: (buffer, typecode, shape)}."""
    from . import quant

    if not layers:
        raise ValueError("head field 'layers' must list at least one layer")
    for i, spec in enumerate(layers):
        _check_layer(i, spec)
    buffers = dict((name, entry[0]) for name, entry in arrays.items())
    model = quant.from_description({"layers": layers}, buffers)
    held = []
    for i, layer in enumerate(model.layers):
        if _plain(layer.spec()) != layers[i]:
            raise ValueError("layers[%d] does not describe the layer its arrays make: %r"
                             % (i, layer.spec()))
        for name, _, code, shape in layer.arrays("%d." % i):
            if arrays[name][1:] != (code, tuple(shape)):
                raise ValueError("array %s must be %r of shape %r, got %r of %r"
                                 % (name, code, tuple(shape), arrays[name][1], arrays[name][2]))
            held.append(name)
    extra = [name for name in arrays if name not in held]
    if extra:
        raise ValueError("arrays %s are not part of the int8 model" % sorted(extra))
    return model


def _plain(value):
    """JSON's view of a value: tuples as lists, in dicts and lists too."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return dict((k, _plain(v)) for k, v in value.items())
    return value


def _check_layer(i, spec):
    kind = spec.get("kind") if isinstance(spec, dict) else None
    fields = _FIELDS.get(kind) if isinstance(kind, str) else None
    if fields is None:
        raise ValueError("layers[%d]: 'kind' must be one of %s, got %r"
                         % (i, ", ".join(sorted(_FIELDS)), kind))
    _check_fields("layers[%d]" % i, spec, fields)
    if kind == "SelfAttention":
        where = "layers[%d]" % i
        _check_fields(where + ".mults", spec["mults"], _ATTENTION_MULTS)
        _check_fields(where + ".scales", spec["scales"], _ATTENTION_SCALES)
        if spec["E"] % spec["H"]:
            raise ValueError("%s: 'E' (%d) must be a multiple of 'H' (%d)"
                             % (where, spec["E"], spec["H"]))
        if spec["seq_len"] is not None and spec["seq_len"] > MAX_SEQ_LEN:
            raise ValueError("%s: 'seq_len' %d is over %d" % (where, spec["seq_len"], MAX_SEQ_LEN))
        for name in spec["bias"]:
            if name not in ("q", "k", "v", "o"):
                raise ValueError("%s: 'bias' lists q, k, v, o, got %r" % (where, name))


def _check_fields(where, spec, fields):
    if not isinstance(spec, dict):
        raise ValueError("%s must be an object, got %r" % (where, spec))
    for name in spec:
        if name not in fields and name != "kind":
            raise ValueError("%s: unknown field %r" % (where, name))
    for name, what in fields.items():
        if name not in spec:
            raise ValueError("%s: field %r is missing" % (where, name))
        value = spec[name]
        if what.endswith("?"):
            if value is None:
                continue
            what = what[:-1]
        if not _valid(value, what):
            raise ValueError("%s: field %r must be %s, got %r"
                             % (where, name, _WANTED[what], value))


_WANTED = {"dim": "an int in 1..%d" % MAX_MESSAGE, "scale": "a finite number > 0",
           "str": "a string", "dict": "an object", "list": "a list",
           "mult": "[m, s, p, cap]: ints 0 <= m < 2^15, 0 <= s, p <= 31, 1 <= cap < 2^31"}


def _valid(value, what):
    if what == "dim":
        return _is_int(value) and 1 <= value <= MAX_MESSAGE
    if what == "scale":
        return (_is_int(value) or isinstance(value, float)) and 0 < value < 1e38
    if what == "mult":
        return isinstance(value, list) and len(value) == 4 and all(_is_int(v) for v in value) \
            and 0 <= value[0] < 32768 and 0 <= value[1] <= 31 and 0 <= value[2] <= 31 \
            and 1 <= value[3] < 2147483648
    return isinstance(value, {"str": str, "dict": dict, "list": list}[what])


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)
