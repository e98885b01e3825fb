"""The int8 language model's ends: QEmbedding (int8 rows and their scale) and QClassifier
(int32 logits, dequantized; tied: the embedding's own int8 rows, one copy). lm_schema.py:
their saved form's schema; lm_convert.py: their making."""

from .numbers import dequantize, flip, int8_buffer


class QEmbedding:
    """Token t -> row t of W, int8 at s_w (offset binary in memory; the row flipped back)."""

    kind = "Embedding"

    def __init__(self, V, E, W, s_w):
        self.num_embeddings, self.E, self.W, self.s_w = V, E, W, s_w
        self.out = int8_buffer(E)

    @property
    def s_x(self):
        return self.s_w

    def out_scale(self):
        return self.s_w

    def forward(self, ids):
        """The int8 row of a one-token list [t] (generate's step): the layer's own buffer."""
        E, W, out = self.E, self.W, self.out
        base = ids[0] * E
        for i in range(E):  # E items a token: no kernel call (nor a memoryview) for them
            out[i] = (W[base + i] & 255) - 128  # offset binary, in bytes or int8 items
        return out

    @staticmethod
    def from_spec(spec, arrays, prefix):
        return QEmbedding(spec["V"], spec["E"], flip(arrays[prefix + "W"]), spec["s_w"])


class QClassifier:
    """logits = x W^T as the int32 accumulator (scale s_x s_w), returned as floats (1, V)."""

    kind = "Classifier"
    out_code = "i"

    def __init__(self, E, V, tied, W, s_x, s_w):
        self.E, self.V, self.tied, self.W, self.s_x, self.s_w = E, V, tied, W, s_x, s_w
        self.dense = self._src = None

    def bind(self, layers):
        """A tied classifier takes the QEmbedding's rows and scale (QSequential calls this)."""
        if self.tied:
            found = [layer for layer in layers if isinstance(layer, QEmbedding)]
            if len(found) != 1 or (found[0].num_embeddings, found[0].E) != (self.V, self.E):
                raise ValueError("a tied Classifier(%d, %d) needs one Embedding(%d, %d)"
                                 % ((self.E, self.V) * 2))
            self.W, self.s_w = found[0].W, found[0].s_w
        from .layers import QDense

        self.dense = QDense(self.E, self.V, self.W, None, None, self.s_x, self.s_w, None)

    def out_scale(self):
        return self.s_x * self.s_w

    def forward_int(self, x):
        """The int32 logits (array 'i', V) of int8 row x: the layer's own buffer."""
        if self.dense is None:
            raise ValueError("a tied Classifier works inside its model (QSequential binds it)")
        if x is not self._src:
            self.dense.plan(x, 1, self.E)
            self._src = x
        self.dense.run()
        return self.dense.out

    def forward(self, x):
        """The float logits (1, V) of int8 row x."""
        return dequantize(self.forward_int(x), 1, self.V, self.out_scale())

    @staticmethod
    def from_spec(spec, arrays, prefix):
        W = None if spec["tied"] else flip(arrays[prefix + "W"])
        return QClassifier(spec["E"], spec["V"], spec["tied"], W, spec["s_x"], spec["s_w"])
