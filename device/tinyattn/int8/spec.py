"""An int8 model from a description sent by a host, checked field by field (LOAD_QMODEL).

The description is what QSequential's layers give as spec(), checked against each int8 layer
class's FIELDS (and its check_spec, when it has one); the arrays are checked against what the
built model holds (layer.arrays()): the same names, typecodes and shapes, nothing left over.
Every problem is a ValueError naming the layer and the field or array.
"""

from .fields import check_layer_spec


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
