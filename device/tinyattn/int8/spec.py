"""An int8 model from a description sent by a host, checked field by field (LOAD_QMODEL).

The description is what QSequential's layers give as spec(), checked against each int8 layer
class's FIELDS (and its check_spec, when it has one); the arrays are checked against what the
built model holds (layer.arrays()): the same names, typecodes and shapes, nothing left over.
Every problem is a ValueError naming the layer and the field or array.
"""

from ..link.wire import MAX_MESSAGE


def qmodel_from(layers, arrays):
    """A QSequential from layer descriptions and {name: (buffer, typecode, shape)}."""
    from .model import from_description

    if not layers:
        raise ValueError("head field 'layers' must list at least one layer")
    for i, spec in enumerate(layers):
        _check_layer(i, spec)
    buffers = dict((name, entry[0]) for name, entry in arrays.items())
    model = from_description({"layers": layers}, buffers)
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
    from .model import layer_kind

    kind = spec.get("kind") if isinstance(spec, dict) else None
    cls = layer_kind(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError("layers[%d]: 'kind' must be one of %s, got %r"
                         % (i, ", ".join(layer_kind()), kind))
    check_layer_spec("layers[%d]" % i, spec, cls)


def check_layer_spec(where, spec, cls):
    """spec against the int8 layer class `cls`: its kind, FIELDS and check_spec."""
    if isinstance(spec, dict) and spec.get("kind") != cls.kind:
        raise ValueError("%s: 'kind' must be %r, got %r" % (where, cls.kind, spec.get("kind")))
    _check_fields(where, spec, cls.FIELDS)
    check = getattr(cls, "check_spec", None)
    if check is not None:
        check(where, spec)


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
        if isinstance(what, dict):
            _check_fields("%s.%s" % (where, name), value, what)
            continue
        if what.endswith("?"):
            if value is None:
                continue
            what = what[:-1]
        if not _valid(value, what):
            raise ValueError("%s: field %r must be %s, got %r"
                             % (where, name, _WANTED[what], value))


_WANTED = {"dim": "an int in 1..%d" % MAX_MESSAGE, "scale": "a finite number > 0",
           "str": "a string", "dict": "an object", "list": "a list", "bool": "true or false",
           "count": "an int >= 1", "lo": "-128 or 0 (the output's lowest value)",
           "add": "[ma, mb, s]: ints 0 <= ma, mb < 2^15, 0 <= s <= 30",
           "adds": "two [ma, mb, s] lists",
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
    if what == "count":
        return _is_int(value) and value >= 1
    if what == "lo":
        return _is_int(value) and value in (-128, 0)
    if what == "add":
        return isinstance(value, list) and len(value) == 3 and all(_is_int(v) for v in value) \
            and 0 <= value[0] < 32768 and 0 <= value[1] < 32768 and 0 <= value[2] <= 30
    if what == "adds":
        return isinstance(value, list) and len(value) == 2 and all(_valid(v, "add") for v in value)
    return isinstance(value, {"str": str, "dict": dict, "list": list, "bool": bool}[what])


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)
