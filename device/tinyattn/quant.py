"""Post-training int8 quantization: quantize(model, calibration_x) and the int8 model.

quantize runs the float model on the calibration set, takes max |.| of every layer's input
and output (and of attention's Q, K, V), and builds the int8 layers of qlayers and
qattention (qnumbers has the formats). The int8 model takes float input, quantizes it once,
runs only integer kernels and dequantizes its output; a last Dense (or Attention) keeps its
int32 accumulator, which is dequantized directly. `save(path)` and `load(path)` use store's
file format (kind "quantized").
"""

from . import store
from .attention import Attention
from .layers import Activation, Dense, GlobalAvgPool, SelfAttention, Sequential, Tokens
from .qattention import QAttention
from .qlayers import QActivation, QDense, QGlobalAvgPool, QTokens
from .qnumbers import (dequantize, fixed_point, int32_bias, int8_weights, max_abs,  # noqa: F401
                       multiplier, quantize_into, quantize_tensor, scale_for, shape2)

QUANTIZED = "quantized"
KINDS = dict((cls.kind, cls) for cls in (QDense, QActivation, QTokens, QGlobalAvgPool, QAttention))
"""The registry of int8 layers, by the `kind` saved in their spec (qencoder's join on first use)."""
ENCODER_KINDS = ("LayerNorm", "PositionalEmbedding", "Gelu", "TransformerEncoderLayer")
"""Float layers (and saved kinds) of qencoder, imported only for a model that has them: it and
the float encoder modules take ~17 KB of a board's heap."""


def layer_kind(kind=None):
    """The int8 layer class of a saved `kind` (None for an unknown one); without a kind, the
    names of every kind."""
    _encoder("LayerNorm" if kind is None else kind)
    if kind is None:
        return sorted(KINDS)
    return KINDS.get(kind)


def _encoder(kind):
    """The qencoder module when `kind` is one of ENCODER_KINDS (registered in KINDS), else None."""
    if kind not in ENCODER_KINDS:
        return None
    from . import qencoder

    KINDS.update((cls.kind, cls) for cls in qencoder.LAYERS)
    return qencoder


class QSequential:
    """The int8 model: float input quantized once, int8 layers, dequantized output.

    Buffers are made when the input's row count changes and reused after that; forward_int
    returns the last layer's own buffer, overwritten by the next call.
    """

    def __init__(self, layers):
        self.layers = list(layers)
        self._source = self._rows = self._cols = None  # the input the layers are bound to
        self._outputs = []
        self._xq = None

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
        self._outputs = outputs
        self._source, self._rows, self._cols = source, in_rows, in_cols

    def forward_int(self, x, rows, cols, trace=None):
        """Run the integer layers on int8 x; returns (buffer, rows, cols) of the last.

        trace: a list that gets (buffer, rows, cols) of every layer's output.
        """
        if self._source is not x or self._rows != rows or self._cols != cols:
            self.plan(x, rows, cols)
        for layer in self.layers:
            layer.run()
        if trace is not None:
            trace.extend(self._outputs)
        return self._outputs[-1]

    def forward(self, x):
        """Float x (B, features) to float outputs (logits), through integer kernels only."""
        rows, cols = shape2(x)
        if self._xq is None or len(self._xq) != rows * cols:
            self._xq = quantize_tensor(x, self.in_scale)
        else:
            quantize_into(x, 1.0 / self.in_scale, -128, self._xq)
        y, rows, cols = self.forward_int(self._xq, rows, cols)
        return dequantize(y, rows, cols, self.layers[-1].out_scale())

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
        """Write the int8 model to `path` (store's format, kind "quantized")."""
        store.write_file(path, QUANTIZED, self.description(), self.named_arrays())


def from_description(description, arrays):
    """The int8 model of `description()` and a dict name -> buffer of its arrays."""
    layers = []
    try:
        for i, spec in enumerate(description["layers"]):
            _encoder(spec["kind"])
            layers.append(KINDS[spec["kind"]].from_spec(spec, arrays, "%d." % i))
    except KeyError as err:
        raise ValueError("the int8 model needs %s, which its description or arrays lack"
                         % (err,))
    except (TypeError, IndexError) as err:
        raise ValueError("bad quantized model description: %r" % (err,))
    if not layers:
        raise ValueError("bad quantized model description: no layers")
    return QSequential(layers)


def load(path):
    """The int8 model saved at `path` by QSequential.save."""
    kind, meta, stored = store.read_file(path)
    if kind != QUANTIZED:
        raise ValueError("%s holds a %r model, not a %r one" % (path, kind, QUANTIZED))
    try:
        return from_description(meta, dict((name, value) for name, _, value in stored))
    except ValueError as err:
        raise ValueError("%s: %s" % (path, err))


# ---- quantize ----------------------------------------------------------------------------
def quantize(model, calibration_x, seq_len=None):
    """The int8 version of a trained float model, scales from running calibration_x.

    model: a Sequential (Dense, Activation, Tokens, SelfAttention, GlobalAvgPool, and
    qencoder's LayerNorm, PositionalEmbedding, Gelu, TransformerEncoderLayer), a Dense, or an
    Attention (give its seq_len). Returns a QSequential; a lone Dense or Attention
    becomes a one-layer QSequential (its forward_int and forward are the layer's).
    """
    if isinstance(model, Sequential):
        layers = model.layers
    elif isinstance(model, (Dense, Attention)):
        layers = [model]
    else:
        raise ValueError("quantize takes a Sequential, Dense or Attention, got %s"
                         % type(model).__name__)
    _check_calibration(layers, calibration_x, seq_len)
    stats = _calibrate(layers, calibration_x, seq_len)
    _check_stats(layers, stats)
    quantized = []
    s_x = scale_for(stats[0]["in"])
    for i, (layer, st) in enumerate(zip(layers, stats)):
        s_y = None if i == len(layers) - 1 else scale_for(st["out"])
        q = _quantize_layer(layer, st, s_x, s_y, seq_len)
        quantized.append(q)
        s_x = q.out_scale()
    return QSequential(quantized)


def _quantize_layer(layer, stats, s_x, s_y, seq_len):
    qencoder = _encoder(type(layer).__name__)
    if qencoder is not None:
        return qencoder.quantize_layer(layer, stats, s_x, s_y)
    if isinstance(layer, Dense):
        return QDense.from_float(layer, s_x, s_y)
    if isinstance(layer, Attention):
        S = getattr(layer, "seq_len", seq_len)
        return QAttention.from_float(layer, stats, s_x, s_y, S)
    if isinstance(layer, Activation):
        return _quantize_activation(layer, s_x, s_y or scale_for(stats["out"]))
    if isinstance(layer, Tokens):
        return QTokens(layer.seq_len, s_x)
    if isinstance(layer, GlobalAvgPool):
        s_y = s_y or scale_for(stats["out"])
        return QGlobalAvgPool(layer.seq_len, multiplier(s_x / layer.seq_len, s_y), s_x, s_y)
    raise ValueError("cannot quantize a %s layer" % type(layer).__name__)


def _quantize_activation(layer, s_x, s_y):
    """The table of f at every int8 input: table[u] = round(f((u ^ 128) - 128) s_x) / s_y)."""
    if layer.kind == "relu":
        s_y = s_x  # max(v, 0) exactly
    return QActivation.from_float(layer.kind, layer.forward, s_x, s_y)


def _check_calibration(layers, x, seq_len):
    """ValueError naming calibration_x (or seq_len) unless it is rows the model can take."""
    from .shapes import all_finite, require_float_rows

    if seq_len is not None and (not isinstance(seq_len, int) or seq_len < 1):
        raise ValueError("seq_len must be an int >= 1 or None, got %r" % (seq_len,))
    require_float_rows("calibration_x (the calibration set)", x, _input_width(layers))
    if not all_finite(x):
        raise ValueError("calibration_x (the calibration set) holds NaN or infinity; "
                         "it must be finite rows of the model's input")


def _input_width(layers):
    """The number of input columns the model takes, None when its first layer does not say."""
    first = layers[0]
    if isinstance(first, Dense):
        return first.in_features
    if isinstance(first, Attention):
        return first.embed_dim
    if isinstance(first, Tokens) and len(layers) > 1:
        width = _input_width(layers[1:])
        return None if width is None else width * first.seq_len
    return None


def _check_stats(layers, stats):
    """ValueError unless every max |.| of the calibration is finite (it gives the scales)."""
    for i, st in enumerate(stats):
        name = _not_finite(st)
        if name is not None:
            raise ValueError("layer %d (%s) gives NaN or infinity (%s) on calibration_x: "
                             "its weights, or the calibration rows, are too large to "
                             "quantize" % (i, type(layers[i]).__name__, name))


def _not_finite(stats):
    """The name of a NaN or infinite value in a dict of floats (and of such dicts), or None."""
    for name in stats:
        value = stats[name]
        if isinstance(value, dict):
            value = _not_finite(value)
            if value is not None:
                return name + "." + value
        elif value - value != 0:
            return name
    return None


def _calibrate(layers, x, seq_len):
    """max|.| of every layer's input and output (and Q, K, V of attention)."""
    stats = []
    for layer in layers:
        st = {"in": max_abs(x)}
        if type(layer).__name__ == "TransformerEncoderLayer":
            x, extra = _encoder("TransformerEncoderLayer").encoder_stats(layer, x)
            st.update(extra)
            stats.append(st)
            continue
        if isinstance(layer, Attention) and not isinstance(layer, SelfAttention):
            if seq_len is None:
                raise ValueError("quantizing an Attention needs its seq_len")
            x = layer.forward(x, seq_len)
        else:
            x = layer.forward(x)
        if isinstance(layer, Attention):
            st.update(layer.calibration_stats())
        st["out"] = max_abs(x)
        stats.append(st)
    return stats
