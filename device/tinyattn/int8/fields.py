"""The fields of an int8 layer's description: check_layer_spec(where, spec, schema) holds a
description (a dict, as spec() gives it and the host sends it) to its kind's schema (the
companion <module>_schema.py's class: int8/layers_schema.py): its FIELDS and check_spec.
Every problem is a ValueError naming the layer and the field. A type ending in "-" is a
field that may be left out (a later addition: older descriptions have none)."""

from ..link.wire import MAX_MESSAGE
from ..nn.checks import is_int, is_number
from .fixedpoint import ADD_RULE, MULTIPLIER_RULE, valid_add, valid_multiplier


def check_layer_spec(where, spec, schema):
    """spec against the schema of its kind: its kind, FIELDS and check_spec."""
    if isinstance(spec, dict) and spec.get("kind") != schema.kind:
        raise ValueError("%s: 'kind' must be %r, got %r" % (where, schema.kind, spec.get("kind")))
    _check_fields(where, spec, schema.FIELDS)
    check = getattr(schema, "check_spec", None)
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
            if isinstance(what, str) and what.endswith("-"):
                continue
            raise ValueError("%s: field %r is missing" % (where, name))
        value = spec[name]
        if isinstance(what, dict):
            _check_fields("%s.%s" % (where, name), value, what)
            continue
        what = what.rstrip("-")
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
           "add": ADD_RULE,
           "adds": "two [ma, mb, s] lists",
           "mult": MULTIPLIER_RULE}


def _valid(value, what):
    if what == "dim":
        return is_int(value) and 1 <= value <= MAX_MESSAGE
    if what == "scale":
        return is_number(value) and 0 < value < 1e38
    if what == "mult":
        return isinstance(value, list) and len(value) == 4 and valid_multiplier(*value)
    if what == "count":
        return is_int(value) and value >= 1
    if what == "lo":
        return is_int(value) and value in (-128, 0)
    if what == "add":
        return isinstance(value, list) and len(value) == 3 and valid_add(*value)
    if what == "adds":
        return isinstance(value, list) and len(value) == 2 and all(_valid(v, "add") for v in value)
    return isinstance(value, {"str": str, "dict": dict, "list": list, "bool": bool}[what])
