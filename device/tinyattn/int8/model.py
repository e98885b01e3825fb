"""The int8 model: QSequential, what a loaded or quantized model runs.

The int8 model takes float input, quantizes it once, runs only integer kernels and dequantizes
its output; a last Dense (or Attention) keeps its int32 accumulator, which is dequantized
directly. Its file is written by model_save.py and read by model_load.py (int8.load, the link's
LOAD_QMODEL), imported for those only; convert.py makes one from a float model (quantize).
"""

from ..nn.checks import require_2d
from .numbers import int8_buffer
from .scratch import Scratch


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
        cache, as tinyattn.generate runs it (lm/generate.py's stepped_logits)."""
        from ..lm.generate import stepped_logits

        return stepped_logits(self.layers, tokens)

    def out_code(self):
        """The typecode of forward_int's output: "i" when the last layer keeps its int32
        accumulator (a last Dense or Attention), else "b"."""
        return getattr(self.layers[-1], "out_code", "b")

    def description(self):
        """What model_load.from_description needs besides the arrays: {"layers": [spec, ...]},
        each layer's by its kind's schema (int8/layers_schema.py)."""
        from .classes import companion

        return {"layers": [companion(type(layer), "schema").spec(layer) for layer in self.layers]}

    def named_arrays(self):
        """(name, buffer, typecode, shape) of every layer's arrays, named "<index>.<name>"."""
        from .classes import companion

        arrays = []
        for i, layer in enumerate(self.layers):
            arrays += companion(type(layer), "schema").arrays(layer, "%d." % i)
        return arrays

    def save(self, path):
        """Write the int8 model to `path` (store's format, kind "quantized"), its description
        as canonical JSON: the bytes the host's quantizer writes for the same model. ValueError,
        and nothing written, for a model that load would refuse (spec.check_description)."""
        from .model_save import save

        save(self, path)


def _run(layer, _):
    layer.run()
