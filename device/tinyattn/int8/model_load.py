"""Loading an int8 model: int8.load(path) from its file (model_save.py writes it) and the
link's LOAD_QMODEL model from its description and arrays, both checked by
spec.check_description before anything is made.

A loaded model runs none of this: int8.load and LOAD_QMODEL import it and let it go again
(tinyattn/let_go.py) with the file's and the check's modules it imported, so a loaded model holds
its layers' code only.
"""

import gc
import sys

from ..let_go import let_go

FILE = ("tinyattn.stored_arrays", "tinyattn.crc", "tinyattn.float32")
"""The file's reader, which a load imports and lets go (when it imported it) after its first
reading of the file and after its last array; the check's modules (classes.check_modules) go
before its first array, this module with the rest."""


def check_description(description, shapes):
    """int8/spec.py's check_description (imported now)."""
    from .spec import check_description

    return check_description(description, shapes)


def _check_modules():
    """classes.py's check_modules (imported now: the check imported it already)."""
    from .classes import check_modules

    return check_modules()


def layer_kind(kind=None):
    """int8/spec.py's layer_kind (imported now)."""
    from .spec import layer_kind

    return layer_kind(kind)


def from_description(description, arrays, classes=None, release=False):
    """The int8 model of `description()` and a dict name -> buffer of its arrays (classes:
    each layer's int8 class, found by layer_kind when not given; release: each layer's
    description is dropped from description["layers"] once the layer is built, so a load's
    heap holds the descriptions still to come, not all)."""
    from .model import QSequential  # (here: its imports would nest 5 deep at the top)

    layers = []
    try:
        specs = description["layers"]
        for i in range(len(specs)):
            spec = specs[i]
            if release:
                specs[i] = None
            gc.collect()  # each layer's buffers go to the lowest free heap, not between garbage
            cls = layer_kind(spec["kind"]) if classes is None else classes[i]
            if cls is None:
                raise ValueError("layer %d: unknown int8 kind %r" % (i, spec["kind"]))
            layers.append(cls.from_spec(spec, arrays, "%d." % i))
            spec = None
    except KeyError as err:
        raise ValueError("the int8 model needs %s, which its description or arrays lack"
                         % (err,))
    except (TypeError, IndexError) as err:
        raise ValueError("bad quantized model description: %r" % (err,))
    if not layers:
        raise ValueError("bad quantized model description: no layers")
    _renew(layers)
    return QSequential(layers)


def _renew(layers):
    """Each float a layer (or a part of one: an encoder's) kept from the parsed description,
    and each dict holding them (an attention's scales), made anew now that every layer is
    built: the copies take the lowest free heap, and the parsed description's objects, which
    lay among the layers' code, go as whole holes (not pieces a 480-byte buffer does not fit:
    the sensor model's first sample in 128 KB on i686, tests/device/test_sensor_heap.py)."""
    for layer in layers:
        attributes = getattr(layer, "__dict__", {})
        for name in list(attributes):
            value = attributes[name]
            if isinstance(value, float):
                setattr(layer, name, value * 1.0)  # a new object (-0.0 and NaN kept)
            elif isinstance(value, dict) and any(isinstance(v, float) for v in value.values()):
                setattr(layer, name, dict((k, v * 1.0 if isinstance(v, float) else v)
                                          for k, v in value.items()))
        _renew([part for part in getattr(layer, "parts", {}).values() if part is not None])


def qmodel_from(layers, arrays):
    """A QSequential from layer descriptions and {name: (buffer, typecode, shape)} (the
    link's LOAD_QMODEL), checked by spec.check_description before anything is made."""
    before = set(sys.modules) - {__name__}  # (this one goes after each load)
    try:
        if not layers:
            raise ValueError("head field 'layers' must list at least one layer")
        check_description({"layers": layers}, dict((name, (entry[1], tuple(entry[2])))
                                                   for name, entry in arrays.items()))
        return from_description({"layers": layers},
                                dict((name, entry[0]) for name, entry in arrays.items()))
    finally:
        let_go(before, FILE + _check_modules() + (__name__,))


def load(path):
    """The int8 model saved at `path` by QSequential.save, in one copy: the file is checked
    and indexed (stored_arrays.open_file), its description checked against the arrays'
    typecodes and shapes (spec.check_description) before anything is made, then each layer
    reads its arrays from the file as it is built: the heap holds the model plus one array at
    a time. The layers' modules are imported first, from a first reading of the file (_kinds).
    ValueError naming the file and the field or array when it is not a good one."""
    before = set(sys.modules) - {__name__}  # (this one goes after each load)
    try:
        model = _load(path, before)
    finally:
        let_go(before, FILE + _check_modules() + (__name__,))
    return model


def _load(path, before):
    kinds = _kinds(path)
    let_go(before, FILE)  # the file's code too, imported again after
    for kind in kinds:
        layer_kind(kind)  # (None for a kind it has no int8 class for: the check says so)
    from ..link.wire import FILE_QUANTIZED as QUANTIZED
    from ..stored_arrays import open_file

    with open_file(path) as stored:
        if stored.kind != QUANTIZED:
            raise ValueError("%s holds a %r model, not a %r one"
                             % (path, stored.kind, QUANTIZED))
        try:
            check_description(stored.meta, dict((name, (code, shape))
                                                for name, code, shape in stored.entries()))
            classes = [layer_kind(spec["kind"]) for spec in stored.meta["layers"]]
            let_go(before, _check_modules())  # before the first array
            stored.read_in_order()  # (from_spec asks for the arrays in the file's order)
            model = from_description(stored.meta, _OnDemand(stored), classes, release=True)
        except ValueError as err:
            raise ValueError("%s: %s" % (path, err))
    return model


def _kinds(path):
    """The kind names the file's description gives its layers, from a first reading of the
    file (checked and indexed as the second is, nothing else kept): load imports their int8
    classes before the description, the index, the file's code and the checks' garbage are
    in the heap, so that their code lies together at its low end, not in the holes that
    garbage leaves (docs/your-model.md, "The heap a model needs")."""
    from ..stored_arrays import open_file

    with open_file(path) as stored:
        meta = stored.meta
    layers = meta.get("layers") if isinstance(meta, dict) else None
    if not isinstance(layers, list):
        return []
    return [spec["kind"] for spec in layers
            if isinstance(spec, dict) and isinstance(spec.get("kind"), str)]


class _OnDemand:
    """The {name: buffer} that from_spec reads, each buffer read from the file when asked."""

    def __init__(self, stored):
        self.stored = stored

    def __getitem__(self, name):
        return self.stored.read(name)  # KeyError when the file has no such array

    def read_bytes(self, name):
        return self.stored.read_bytes(name)  # (numbers.offset_binary)

    def get(self, name, default=None):
        try:
            return self.stored.read(name)
        except KeyError:
            return default
