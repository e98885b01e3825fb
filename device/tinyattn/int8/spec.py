"""An int8 model's description checked against its arrays, before anything is allocated: the
one check of every way an int8 model arrives (int8.load, the link's LOAD_QMODEL: model.py) and
of what QSequential.save writes; and the int8 class of each saved kind (layer_kind).

The description is what QSequential's layers give as spec(), checked against the schema of
each layer's kind (its int8 class's companion in <module>_schema.py: FIELDS, and check_spec
when it has one); the arrays, {name: (typecode, shape)}, against what the schema's
array_shapes says the description needs: the same names, typecodes and shapes, nothing left
over. The layers must fit together as a float model of the
same sizes would (nn/flow.py), and only the last one may keep its int32 accumulator. Every
problem is a ValueError naming the layer and the field or array.
"""

from .classes import companion, int8_class
from .fields import check_layer_spec


def check_description(description, shapes):
    """ValueError unless `description` ({"layers": [spec, ...]}) and `shapes`
    ({name: (typecode, shape)} of the arrays at hand) make a working int8 model."""
    from ..nn.flow import follow

    description = _plain(description)  # a model's own description() has tuples
    layers = description.get("layers") if isinstance(description, dict) else None
    if not isinstance(layers, list) or not layers:
        raise ValueError("the int8 model's description must be {\"layers\": [a layer, ...]}, "
                         "got %s" % _short(description))
    held = []
    for i, spec in enumerate(layers):
        where = "layers[%d]" % i
        schema = _check_layer(i, spec)
        if i < len(layers) - 1 and _int32_output(schema, spec):
            raise ValueError("%s: only the last layer may keep its int32 accumulator (its "
                             "multiplier null)" % where)
        for name, code, shape, required in schema.array_shapes(spec):
            name = "%d.%s" % (i, name)
            if name in shapes:
                got = shapes[name]
                if tuple(got) != (code, shape):
                    raise ValueError("array %s must be %r of shape %r, got %r of shape %r"
                                     % (name, code, shape, got[0], got[1]))
                held.append(name)
            elif required:
                raise ValueError("%s needs array %s (%r of shape %r)" % (where, name, code, shape))
    extra = [name for name in shapes if name not in held]
    if extra:
        raise ValueError("arrays %s are not part of the int8 model" % sorted(extra))
    try:
        follow(float_config(layers))
    except ValueError as err:
        raise ValueError("the layers do not fit together: %s" % err)


def layer_kind(kind=None):
    """The int8 layer class of a saved `kind` (its module imported now; None for a kind that
    has none); without a kind, the names of every saved kind (every int8 module imported)."""
    from ..nn.spec import KINDS

    if kind is None:
        return sorted(k for k in KINDS if layer_kind(k) is not None)
    declared = KINDS.get(kind) if isinstance(kind, str) else None
    cls = None if declared is None else int8_class(declared)
    return cls if cls is not None and cls.kind == kind else None


def _check_layer(i, spec):
    """The schema of layers[i]'s kind, its description checked against it."""
    kind = spec.get("kind") if isinstance(spec, dict) else None
    cls = layer_kind(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError("layers[%d]: 'kind' must be one of %s, got %r"
                         % (i, ", ".join(layer_kind()), kind))
    schema = companion(cls, "schema")
    check_layer_spec("layers[%d]" % i, spec, schema)
    if spec.get("seq_len", 1) is None:  # an attention layer's may be None, not a model's
        raise ValueError("layers[%d]: 'seq_len' must be an int >= 1 in a model" % i)
    return schema


def _int32_output(schema, spec):
    """Whether a (checked) description keeps its int32 accumulator: its schema's INT32 is the
    path of the multiplier that is then null (none: it never does; an empty path: always)."""
    path = getattr(schema, "INT32", None)
    if path is None:
        return False
    if not path:
        return True
    for key in path:
        spec = spec[key]
    return spec is None


def float_config(layers):
    """The float config of the same sizes as (checked) int8 layer descriptions: what
    nn/flow.py follows. Each schema's FLOAT names the fields that give its float kind's
    arguments (a value that is not a field is itself); a schema whose entry is more than that
    has float_entry(spec) (the encoder layer)."""
    config = []
    for spec in layers:
        schema = companion(layer_kind(spec["kind"]), "schema")
        if hasattr(schema, "float_entry"):
            config.append(schema.float_entry(spec))
        else:
            config.append([schema.kind] + [spec.get(f, f) for f in schema.FLOAT])
    return config


def _plain(value):
    """JSON's view of a value: tuples as lists, in dicts and lists too."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return dict((k, _plain(v)) for k, v in value.items())
    return value


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
