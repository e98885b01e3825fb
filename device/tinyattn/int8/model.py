"""The int8 model: QSequential, the int8 class of each layer kind, and load(path).

The int8 model takes float input, quantizes it once, runs only integer kernels and dequantizes
its output; a last Dense (or Attention) keeps its int32 accumulator, which is dequantized
directly. `save(path)` and `load(path)` use store's file format (kind "quantized"); convert.py
makes one from a float model (quantize).
"""

import gc
import sys

from ..nn.checks import require_2d
from .numbers import int8_buffer
from .scratch import Scratch

# What only a load's check and reading need (the file and its format's constants, the
# description's schema, the float layers' fit): ~21 KB of code (32-bit, .mpy) that load
# imports and lets go again when it imported it (_let_go), so a loaded model holds its layers'
# modules only. The first FILE_ONLY go after the last array is read, the rest before the first.
CHECK_ONLY = ("tinyattn.stored_arrays", "tinyattn.crc", "tinyattn.float32", "tinyattn.link.wire",
              "tinyattn.link", "tinyattn.int8.spec", "tinyattn.int8.fields",
              "tinyattn.int8.classes", "tinyattn.nn.flow", "tinyattn.nn.spec",
              "tinyattn.nn.arguments")
FILE_ONLY = 5


def check_description(description, shapes):
    """int8/spec.py's check_description (imported now)."""
    from .spec import check_description

    return check_description(description, shapes)


def int8_class(declared):
    """int8/spec.py's int8_class (imported now)."""
    from .spec import int8_class

    return int8_class(declared)


def layer_kind(kind=None):
    """int8/spec.py's layer_kind (imported now)."""
    from .spec import layer_kind

    return layer_kind(kind)



class QSequential:
    """The int8 model: float input quantized once, int8 layers, dequantized output.

    Buffers are made when the input's row count changes and reused after that, and the
    layers' kernel calls gathered in one flat list (their `calls()`; run() for a layer
    without); forward_int returns the last layer's own buffer, overwritten by the next call;
    forward returns a new float array each call.
    """

    def __init__(self, layers):
        self.layers = list(layers)
        shared = Scratch()  # the encoder layers' scratch buffers, one layer's worth
        for layer in self.layers:
            if hasattr(layer, "bind"):  # a tied classifier finds its embedding
                layer.bind(self.layers)
            if hasattr(layer, "share_scratch"):
                layer.share_scratch(shared)
        self._source = self._rows = self._cols = None  # the input the layers are bound to
        self._outputs = []
        self._calls = None  # [(function, a, b)]: every kernel call of a forward, in order
        self._xq = self._numbers = None  # the input's int8 buffer, its Quantizer
        self._kept = True  # a mask may be set in the layers (a new model: say None once)

    @property
    def in_scale(self):
        return self.layers[0].s_x

    def plan(self, x, rows, cols):
        """Bind every layer for int8 input x (rows, cols); the kernels then run unchecked."""
        self._source = None
        outputs = []
        source, in_rows, in_cols = x, rows, cols
        for layer in self.layers:
            x, rows, cols = layer.plan(x, rows, cols)
            outputs.append((x, rows, cols))
        self._outputs, self._calls = outputs, None
        self._source, self._rows, self._cols = source, in_rows, in_cols

    def calls(self):
        """Every layer's kernel calls in order, (function, a, b) each (_run for a layer
        without calls())."""
        out = []
        for layer in self.layers:
            calls = getattr(layer, "calls", None)
            out += [(_run, layer, None)] if calls is None else calls()
        return out

    def forward_int(self, x, rows, cols, trace=None, keep=None):
        """Run the integer layers on int8 x; returns (buffer, rows, cols) of the last.

        trace: a list that gets (buffer, rows, cols) of every layer's output. keep: the B*S
        bytes of a padding mask (0 = padding), for every layer that takes one (set_keep).
        """
        if self._source is not x or self._rows != rows or self._cols != cols:
            self.plan(x, rows, cols)
        if keep is not None or self._kept:  # (nothing to tell when no mask came, nor now)
            for layer in self.layers:
                if hasattr(layer, "set_keep"):
                    layer.set_keep(keep)
            self._kept, self._calls = keep is not None, None
        calls = self._calls
        if calls is None:
            calls = self._calls = self.calls()
        for function, a, b in calls:
            function(a, b)
        if trace is not None:
            trace.extend(self._outputs)
        return self._outputs[-1]

    def forward(self, x, mask=None):
        """Float x (B, features) to float outputs (logits), through integer kernels only;
        mask (B, S) of 0/1: the padding of each sequence, as for Sequential.forward."""
        rows, cols = require_2d("x", x)
        keep = None
        if mask is not None:
            from ..nn.pooling_masks import require_mask
            from .attention import keep_bytes

            B, S = require_2d("mask", mask)
            require_mask(mask, B, S)  # 0/1, a kept token in every row; B: the layers check
            keep = keep_bytes(mask, B * S, S)
        self.prepare()
        if self._xq is None or len(self._xq) != rows * cols:
            self._xq = int8_buffer(rows * cols)
        self._numbers.quantize_into(x, self._xq)
        y, rows, cols = self.forward_int(self._xq, rows, cols, keep=keep)
        return self._numbers.dequantize(y, rows, cols)

    def prepare(self):
        """Make the input's Quantizer and find its steps now (else the first forward does):
        a server does it right after QUANTIZE or LOAD_QMODEL, before the heap is in pieces."""
        if self._numbers is None:
            from .quantizer import Quantizer

            self._numbers = Quantizer(1.0 / self.in_scale, -128, self.layers[-1].out_scale())
            self._numbers.prepare()

    def logits(self, tokens):
        """A language model's (QEmbedding first) logits at every position of the list of
        token ids, (len(tokens), vocab) floats: each position a step against a new int8
        cache, as tinyattn.generate runs it."""
        from ulab import numpy as np
        from ..lm.generate import step
        from ..nn.embedding import token_ids

        if not hasattr(self.layers[0], "num_embeddings"):
            raise ValueError("logits needs an int8 language model (Embedding first)")
        ids = token_ids(list(tokens), self.layers[0].num_embeddings)
        caches = [layer.new_cache(len(ids)) if hasattr(layer, "step") else None
                  for layer in self.layers]
        out = np.zeros((len(ids), self.layers[-1].V))
        for pos in range(len(ids)):
            out[pos, :] = step(self.layers, caches, ids[pos], pos)
        return out

    def out_code(self):
        """The typecode of forward_int's output: "i" when the last layer keeps its int32
        accumulator (a last Dense or Attention), else "b"."""
        return getattr(self.layers[-1], "out_code", "b")

    def description(self):
        """What `from_description` needs besides the arrays: {"layers": [spec, ...]}."""
        return {"layers": [layer.spec() for layer in self.layers]}

    def named_arrays(self):
        """(name, buffer, typecode, shape) of every layer's arrays, named "<index>.<name>"."""
        arrays = []
        for i, layer in enumerate(self.layers):
            arrays += layer.arrays("%d." % i)
        return arrays

    def save(self, path):
        """Write the int8 model to `path` (store's format, kind "quantized"), its description
        as canonical JSON: the bytes the host's quantizer writes for the same model. ValueError,
        and nothing written, for a model that load would refuse (spec.check_description)."""
        from .. import store  # (its heap only for a save)
        from ..canonical_json import dumps
        from ..link.wire import FILE_QUANTIZED as QUANTIZED

        description, arrays = self.description(), self.named_arrays()
        try:
            check_description(description, dict((name, (code, tuple(shape)))
                                                 for name, _, code, shape in arrays))
        except ValueError as err:
            raise ValueError("%s not saved: %s" % (path, err))
        store.write_file(path, QUANTIZED, dumps(description), arrays)


def _run(layer, _):
    layer.run()


def from_description(description, arrays, classes=None, release=False):
    """The int8 model of `description()` and a dict name -> buffer of its arrays (classes:
    each layer's int8 class, found by layer_kind when not given; release: each layer's
    description is dropped from description["layers"] once the layer is built, so a load's
    heap holds the descriptions still to come, not all)."""
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
    return QSequential(layers)


def qmodel_from(layers, arrays):
    """A QSequential from layer descriptions and {name: (buffer, typecode, shape)} (the
    link's LOAD_QMODEL), checked by spec.check_description before anything is made."""
    if not layers:
        raise ValueError("head field 'layers' must list at least one layer")
    check_description({"layers": layers},
                      dict((name, (entry[1], tuple(entry[2]))) for name, entry in arrays.items()))
    return from_description({"layers": layers},
                            dict((name, entry[0]) for name, entry in arrays.items()))


def load(path):
    """The int8 model saved at `path` by QSequential.save, in one copy: the file is checked
    and indexed (stored_arrays.open_file), its description checked against the arrays'
    typecodes and shapes (spec.check_description) before anything is made, then each layer
    reads its arrays from the file as it is built: the heap holds the model plus one array at
    a time. The layers' modules are imported first, from a first reading of the file (_kinds).
    ValueError naming the file and the field or array when it is not a good one."""
    before = set(sys.modules)
    try:
        model = _load(path, before)
    finally:
        _let_go(before, CHECK_ONLY)
    return model


def _load(path, before):
    from ..link.wire import FILE_QUANTIZED as QUANTIZED
    from ..stored_arrays import open_file

    kinds = _kinds(path, open_file)
    gc.collect()  # the first reading's description and index, before the imports
    for kind in kinds:
        layer_kind(kind)  # (None for a kind it has no int8 class for: the check says so)
    with open_file(path) as stored:
        if stored.kind != QUANTIZED:
            raise ValueError("%s holds a %r model, not a %r one"
                             % (path, stored.kind, QUANTIZED))
        try:
            check_description(stored.meta, dict((name, (code, shape))
                                                for name, code, shape in stored.entries()))
            classes = [layer_kind(spec["kind"]) for spec in stored.meta["layers"]]
            # the checks' code (and the kinds' schemas), before the first array
            _let_go(before, CHECK_ONLY[FILE_ONLY:] + _schemas())
            model = from_description(stored.meta, _OnDemand(stored), classes, release=True)
        except ValueError as err:
            raise ValueError("%s: %s" % (path, err))
    return model


def _kinds(path, open_file):
    """The kind names the file's description gives its layers, from a first reading of the
    file (checked and indexed as the second is, nothing else kept): load imports their int8
    classes before the description, the index and the checks' garbage are in the heap, so
    that their code lies together at its low end, not in the holes that garbage leaves
    (docs/your-model.md, "The heap a model needs")."""
    with open_file(path) as stored:
        meta = stored.meta
    layers = meta.get("layers") if isinstance(meta, dict) else None
    if not isinstance(layers, list):
        return []
    return [spec["kind"] for spec in layers
            if isinstance(spec, dict) and isinstance(spec.get("kind"), str)]


def _schemas():
    """The names of the schema modules imported (int8/layers_schema.py and its kind)."""
    return tuple(name for name in sys.modules if name.endswith("_schema"))


def _let_go(before, names):
    """Drop the modules `names` that were not imported `before` (a later import reads them
    again), so their code is garbage once nothing of them is held."""
    for name in names:
        if name in sys.modules and name not in before:
            del sys.modules[name]
            parent, _, child = name.rpartition(".")
            try:
                delattr(sys.modules[parent], child)
            except (KeyError, AttributeError):
                pass
    gc.collect()


class _OnDemand:
    """The {name: buffer} that from_spec reads, each buffer read from the file when asked
    (once)."""

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
