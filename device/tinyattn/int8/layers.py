"""The int8 layers: each is built once, planned once per input shape, then run with no checks.

Contract of a quantized layer (QSequential relies on nothing else):
- `kind` (the int8 kind, its saved name; nn/spec.py's declaration of a float kind names the
  class), `s_x` (input scale), `out_scale()`;
- `plan(src, rows, cols)`: make (once per row count) and bind the buffers for int8 input `src`
  of that shape, check everything, return (output buffer, rows, cols);
- `run()`: the kernels, positionally, no allocation; `calls()`, where a layer has it, the
  same kernel calls as (function, a, b) triples, each run as function(a, b), good until the
  next plan or set_keep (QSequential runs a flat list of them: no Python frame a layer);
- `from_spec(spec, arrays, prefix)`: the layer of a saved description and its arrays.

What a model runs only: a class's saved form (what its description must hold, and the
description and arrays a layer saves) is the class of its kind in <module>_schema.py, its
making from a float layer (`quantize`) the one in <module>_convert.py (int8/classes.py's
companion finds them; docs/layer-kinds.md), so that a loaded model holds the code it runs and
no more.
"""

import array

from . import backend, kernels, kernels_pool
from .numbers import int8_buffer, offset_binary
from . import scratch


def _tuple(mult):
    return None if mult is None else tuple(mult)


class QDense:
    """y = x W^T + b: int32 accumulator, then requantized to int8 (or kept, mult None)."""

    kind = "Dense"

    def __init__(self, in_features, out_features, W, b, mult, s_x, s_w, s_y, lo=-128):
        self.in_features, self.out_features = in_features, out_features
        self.W, self.has_bias, self.mult = W, b is not None, mult  # W offset binary (out, in)
        self.s_x, self.s_w, self.s_y, self.lo = s_x, s_w, s_y, lo  # lo 0: a ReLU folded in
        self.header = kernels.linear_header(out_features, in_features, b, mult, lo)
        self.out, self._rows, self._kernel = None, None, None
        self.out_code = "i" if mult is None else "b"  # the int32 accumulator, or int8
        self.scratch = None  # (Scratch, prefix): an int8 out shared (int8/scratch.py)

    def bias(self):
        """The int32 bias (a new array, from the header, which alone holds it), or None."""
        return kernels.header_bias(self.header) if self.has_bias else None

    def out_scale(self):
        return self.s_x * self.s_w if self.mult is None else self.s_y

    def plan(self, src, rows, cols):
        if cols != self.in_features:
            raise ValueError("x has %d columns, Dense needs %d" % (cols, self.in_features))
        n = self.out_features
        if rows != self._rows:
            if self.mult is None:
                self.out = array.array("i", bytes(4 * rows * n))
            else:
                self.out = scratch.int8_buffer(self.scratch, "out", rows * n)
            self._rows = rows
        kernels.bind_linear(self.header, self.W, rows, src, self.out)
        if self._kernel is None:  # the backend's kernel and its weight layout, made once
            self._kernel = backend.linear_kernel(self.W, n, self.in_features)
        return self.out, rows, n

    def run(self):
        linear, w = self._kernel
        linear(self.header, w)

    def calls(self):
        return [(self._kernel[0], self.header, self._kernel[1])]

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QDense(spec["in"], spec["out"], offset_binary(arrays, prefix + "W"),
                      arrays.get(prefix + "b"), _tuple(spec["mult"]), spec["s_x"],
                      spec["s_w"], spec["s_y"], spec.get("lo", -128))


class QActivation:
    """An activation as a 256-entry int8 table: table[v & 255] = round(f(v s_x) / s_y)."""

    kind = "Activation"

    def __init__(self, name, table, s_x, s_y):
        self.name, self.table, self.s_x, self.s_y = name, table, s_x, s_y
        self.src, self.out, self._n = None, None, 0
        self.scratch = None  # (Scratch, prefix): out shared (int8/scratch.py)

    def out_scale(self):
        return self.s_y

    def plan(self, src, rows, cols):
        n = rows * cols
        kernels.need("x", src, 1, n)
        if self.out is None or len(self.out) != n:
            self.out = scratch.int8_buffer(self.scratch, "out", n)
        self.src, self._n = src, n
        return self.out, rows, cols

    def run(self):
        kernels.table_lookup(self.src, self.out, self._n, self.table)

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QActivation(spec["name"], arrays[prefix + "table"], spec["s_x"], spec["s_y"])


class QTokens:
    """(B, S*E) to (B*S, E): the same bytes, another shape."""

    kind = "Tokens"

    def __init__(self, seq_len, s_x):
        self.seq_len, self.s_x = seq_len, s_x

    def out_scale(self):
        return self.s_x

    def plan(self, src, rows, cols):
        if cols % self.seq_len:
            raise ValueError("x has %d columns, not a multiple of seq_len %d"
                             % (cols, self.seq_len))
        return src, rows * self.seq_len, cols // self.seq_len

    def run(self):
        pass

    def calls(self):
        return []

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QTokens(spec["seq_len"], spec["s_x"])


class QGlobalAvgPool:
    """(B*S, E) to (B, E): int sums of each sequence's tokens, requantized by 1/S; with keep
    bytes (set_keep: a padding mask) the sums of its kept tokens, requantized by 1/n with
    mults[n - 1] (kernels_pool; saved as "by_count")."""

    kind = "GlobalAvgPool"

    def __init__(self, seq_len, mult, s_x, s_y, mults):
        self.seq_len, self.mult, self.s_x, self.s_y = seq_len, mult, s_x, s_y
        self.mults = mults
        self.header, self.out, self._cols, self._src = None, None, None, None
        self.keep_header = self.keep = None

    def out_scale(self):
        return self.s_y

    def plan(self, src, rows, cols):
        S = self.seq_len
        if rows % S:
            raise ValueError("x has %d rows, not a multiple of seq_len %d" % (rows, S))
        if cols != self._cols:
            self.header = kernels_pool.pool_header(S, cols, self.mult)
            self.keep_header = None  # made by the first mask (set_keep)
            self._cols = cols
        B = rows // S
        if self.out is None or len(self.out) != B * cols:
            self.out = int8_buffer(B * cols)
        kernels_pool.bind_pool(self.header, B, src, self.out)
        self._src = src
        if self.keep_header is not None:
            kernels_pool.bind_pool_keep(self.keep_header, B, src, self.out)
        return self.out, B, cols

    def set_keep(self, keep):
        """The keep bytes (B*S, 0 = padding) of the next runs, or None: every token."""
        if keep is not None and self.mults is None:
            raise ValueError("this int8 model's pooling has no masked multipliers (saved "
                             "before masks): quantize the float model again")
        if keep is not None:
            if self.keep_header is None:
                self.keep_header = kernels_pool.pool_keep_header(self.seq_len, self._cols,
                                                                 self.mults)
                kernels_pool.bind_pool_keep(self.keep_header, len(self.out) // self._cols,
                                            self._src, self.out)
            kernels_pool.check_keep(self.keep_header, keep)
        self.keep = keep

    def run(self):
        if self.keep is None:
            kernels_pool.pool(self.header)
        else:
            kernels_pool.pool_keep(self.keep_header, self.keep)

    def calls(self):
        if self.keep is None:
            return [kernels_pool.pool_call(self.header)]
        return [kernels_pool.pool_call(self.keep_header, self.keep)]

    @staticmethod
    def from_spec(spec, arrays, prefix):
        mults = spec.get("by_count")  # absent in a file saved before masked pooling
        return QGlobalAvgPool(spec["seq_len"], _tuple(spec["mult"]), spec["s_x"], spec["s_y"],
                              None if mults is None else [_tuple(m) for m in mults])
