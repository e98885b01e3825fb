"""The int8 encoder: PyTorch's TransformerEncoderLayer (LayerNorm and the positional add are
in int8/norm.py).

A QTransformerEncoderLayer is QAttention, two residual adds (both inputs requantized to the
sum's scale, rounded once), two QLayerNorms and the feed-forward block: QDense with the ReLU
folded into its saturation (lo = 0), or QDense, the GELU as a 256-entry table (QActivation),
QDense. It follows the contract of int8/layers.py: planned once per shape, run with no
allocation (encoder_schema.py: its saved form's schema; encoder_convert.py: its making).
"""

import array

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .numbers import dequantize, quantize_tensor
from . import kernels_attend
from . import kernels_norm as nk
from .attention import QAttention, keep_bytes
from .layers import QActivation, QDense
from .norm import QLayerNorm
from .scratch import signed
from ..nn.checks import require_2d

PARTS = ("self_attn", "linear1", "act", "linear2", "norm1", "norm2")
_PART_KINDS = {"self_attn": QAttention, "linear1": QDense, "act": QActivation,
               "linear2": QDense, "norm1": QLayerNorm, "norm2": QLayerNorm}


class QTransformerEncoderLayer:
    """PyTorch's TransformerEncoderLayer in int8 (see encoder.py for the float form):

        norm_first=False:  h = norm1(x + self_attn(x));  y = norm2(h + ff(h))
        norm_first=True:   h = x + self_attn(norm1(x));  y = h + ff(norm2(h))

    parts {self_attn, linear1, act (None for ReLU, folded into linear1), linear2, norm1,
    norm2}; adds (mults of the first and second residual add)."""

    kind = "TransformerEncoderLayer"

    def __init__(self, parts, adds, norm_first, seq_len, causal, s_x, s_y):
        self.parts, self.adds = parts, adds
        self.norm_first, self.seq_len, self.causal = norm_first, seq_len, causal
        self.s_x, self.s_y = s_x, s_y
        self.E = parts["self_attn"].embed_dim
        self.add1, self.add2 = nk.add_header(self.E, adds[0]), nk.add_header(self.E, adds[1])
        self._rows = self._bufs = self._source = self._out = None
        self._scratch = None  # the Scratch that share_scratch gave

    def share_scratch(self, shared):
        """Take every buffer but the output from the Scratch `shared` (int8/scratch.py), which
        the model's other encoder layers share: the output (norm2's, or the second add's when
        norm_first) is the next layer's input and stays the layer's own."""
        self._scratch = shared
        last = "norm2" if not self.norm_first else None
        for name, part in self.parts.items():
            if part is not None:
                part.scratch = None if name == last else (shared, name + ".")

    def out_scale(self):
        return self.s_y

    def plan(self, src, rows, cols):
        p = self.parts
        if cols != self.E:
            raise ValueError("x has %d columns, the encoder layer needs %d" % (cols, self.E))
        if rows != self._rows:
            shared = self._scratch
            if shared is not None:  # its largest buffer first, while a piece of the heap fits it
                shared.get("linear1.out", rows * p["linear1"].out_features)
            first = array.array("b", bytes(rows * cols)) if shared is None else \
                shared.get("first", rows * cols)  # the first add's (the second one's input)
            second = array.array("b", bytes(rows * cols)) if shared is None or \
                self.norm_first else shared.get("second", rows * cols)
            self._bufs = [first, second]
            self._rows = rows
        first, second = self._bufs
        if self.norm_first:
            n1 = p["norm1"].plan(src, rows, cols)[0]
            nk.bind_add(self.add1, rows, src, p["self_attn"].plan(n1, rows, cols)[0], first)
            f = self._plan_ff(p["norm2"].plan(first, rows, cols)[0], rows)
            nk.bind_add(self.add2, rows, first, f, second)
            y = second
        else:
            nk.bind_add(self.add1, rows, src, p["self_attn"].plan(src, rows, cols)[0], first)
            h = p["norm1"].plan(first, rows, cols)[0]
            nk.bind_add(self.add2, rows, h, self._plan_ff(h, rows), second)
            y = p["norm2"].plan(second, rows, cols)[0]
        kernels_attend.set_keep(p["self_attn"].core, None, self.causal)
        self._source, self._out = src, (y, rows, cols)
        return self._out

    def _plan_ff(self, src, rows):
        p = self.parts
        f, rows, cols = p["linear1"].plan(src, rows, self.E)
        if p["act"] is not None:
            f = p["act"].plan(f, rows, cols)[0]
        return p["linear2"].plan(f, rows, cols)[0]

    def run(self):
        p = self.parts
        attention, linear2 = p["self_attn"], p["linear2"]
        if self.norm_first:
            p["norm1"].run()
            attention.run()
            nk.add(self.add1, attention.out)
            p["norm2"].run()
            self._run_ff()
            nk.add(self.add2, linear2.out)
        else:
            attention.run()
            nk.add(self.add1, attention.out)
            p["norm1"].run()
            self._run_ff()
            nk.add(self.add2, linear2.out)
            p["norm2"].run()

    def _run_ff(self):
        p = self.parts
        p["linear1"].run()
        if p["act"] is not None:
            p["act"].run()
        p["linear2"].run()

    def intermediates(self):
        """{name: buffer} of the last run: "attention", "h0"/"n1", "h", "f1", "act" (GELU),
        "f2", "y0"/"n2", "y" (names of reference.int8_encoder.encoder_layer)."""
        p = self.parts
        first, second = self._bufs
        out = {"attention": p["self_attn"].out, "f1": p["linear1"].out,
               "f2": p["linear2"].out}
        if p["act"] is not None:
            out["act"] = p["act"].out
        if self.norm_first:
            out.update(n1=p["norm1"].out, h=first, n2=p["norm2"].out, y=second)
        else:
            out.update(h0=first, h=p["norm1"].out, y0=second, y=p["norm2"].out)
        return dict((name, signed(buf)) for name, buf in out.items())  # shared: bytearrays

    def set_keep(self, keep):
        """The keep bytes (B*S, 0 = padding key) of the next runs in a QSequential, or None."""
        kernels_attend.set_keep(self.parts["self_attn"].core, keep, self.causal)

    def forward_int(self, x, rows, cols, keep=None, causal=None):
        """int8 x (B*S, E) to int8 (B*S, E) in the layer's buffer; keep: B*S bytes, 0 where
        key j of sequence b is padding; causal None: the layer's."""
        if x is not self._source or rows != self._rows:
            self.plan(x, rows, cols)
        kernels_attend.set_keep(self.parts["self_attn"].core, keep,
                         self.causal if causal is None else causal)
        self.run()
        return self._out

    def forward(self, x, mask=None, causal=None):
        """Float x (B*S, E) to float (B*S, E); mask (B, S) of 0/1 as for the float layer."""
        rows, cols = require_2d("x", x)
        keep = keep_bytes(mask, rows, self.seq_len)
        y, rows, cols = self.forward_int(quantize_tensor(x, self.s_x), rows, cols, keep, causal)
        return dequantize(y, rows, cols, self.s_y)

    @staticmethod
    def from_spec(spec, arrays, prefix):
        specs = spec["parts"]
        parts = dict((n, _PART_KINDS[n].from_spec(specs[n], arrays, prefix + n + ".")
                      if n in specs else None) for n in PARTS)
        return QTransformerEncoderLayer(parts, [tuple(a) for a in spec["adds"]],
                                        spec["norm_first"], spec["seq_len"], spec["causal"],
                                        spec["s_x"], spec["s_y"])
