"""Post-training int8 quantization: quantize(model, calibration_x) -> the int8 model.

quantize runs the float model on the calibration set, batch_size samples at a time (so the
heap of one batch is enough: the float model keeps nothing between them), takes max |.| of
every layer's input and output (and of attention's Q, K, V) over all batches, and makes each
int8 layer with its kind's conversion (int8/layers_convert.py; int8/numbers.py has the
formats), in a QSequential (int8/model.py).
Not named quantize.py: importing a submodule sets the package's attribute of its name, which
would hide the function tinyattn.int8.quantize.
"""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .scales import max_abs, scale_for
from ..nn.attention import Attention
from ..nn.layers import Dense, SelfAttention, Tokens
from ..nn.sequential import Sequential
from ..nn.spec import takes_mask
from .model import QSequential
from .classes import companion, imported, int8_class


def quantize(model, calibration_x, seq_len=None, batch_size=16, mask=None):
    """The int8 version of a trained float model, scales from running calibration_x,
    `batch_size` samples at a time (the same scales, bit for bit, as one pass), with its
    padding mask (samples, S) for a model of variable-length sequences.

    calibration_x: a 2-D ulab array of rows, or the path of a 2-D float32/float64 .npy file
    of them (npy_rows.py), read a batch at a time: the heap holds one batch's activations
    whatever the number of rows, and the result is the array's, byte for byte.

    A language model (a Sequential of Embedding, DecoderBlock..., RMSNorm, Classifier) takes
    token ids as calibration_x (a list), run a window of 64 at a time (convert_lm.py).

    model: a Sequential (Dense, Activation, Tokens, SelfAttention, GlobalAvgPool, and
    qencoder's LayerNorm, PositionalEmbedding, Gelu, TransformerEncoderLayer), a Dense, or an
    Attention (give its seq_len). Returns a QSequential; a lone Dense or Attention
    becomes a one-layer QSequential (its forward_int and forward are the layer's).

    The conversion's code goes after (let_go.py): this module, the kinds' conversions and the
    scales' arithmetic, unless imported before; the int8 model holds what it runs.
    """
    import sys

    before = set(sys.modules) - {__name__}
    try:
        return _quantize(model, calibration_x, seq_len, batch_size, mask)
    finally:
        from ..let_go import let_go

        let_go(before, CONVERSION + imported("convert"))


CONVERSION = (__name__, "tinyattn.int8.convert_lm", "tinyattn.int8.scales",
              "tinyattn.int8.classes")
"""The modules of a conversion alone (with the kinds' <module>_convert.py)."""


def _quantize(model, calibration_x, seq_len, batch_size, mask):
    if isinstance(model, Sequential) and hasattr(model.layers[0], "num_embeddings"):
        from .convert_lm import quantize_lm

        return quantize_lm(model.layers, calibration_x)
    if isinstance(model, Sequential):
        layers = model.layers
    elif isinstance(model, (Dense, Attention)):
        layers = [model]
    else:
        raise ValueError("quantize takes a Sequential, Dense or Attention, got %s"
                         % type(model).__name__)
    if isinstance(calibration_x, str):
        from ..npy_rows import NpyRows

        calibration_x = NpyRows(calibration_x)
    _check_calibration(layers, calibration_x, seq_len)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError("batch_size must be an int >= 1, got %r" % (batch_size,))
    rows = _rows_a_sample(model, seq_len)
    if mask is not None and getattr(mask, "shape", (None,))[0] != calibration_x.shape[0] // rows:
        raise ValueError("mask must have one row a calibration sample (%d), got shape %r"
                         % (calibration_x.shape[0] // rows, getattr(mask, "shape", None)))
    stats = _calibrate(layers, calibration_x, seq_len, batch_size, rows, mask)
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
    """The conversion of the int8 class its kind's declaration names (a lone Attention:
    SelfAttention's)."""
    from ..nn.spec import KINDS

    kind = "SelfAttention" if isinstance(layer, Attention) else type(layer).__name__
    cls = int8_class(KINDS[kind]) if kind in KINDS else None
    if cls is None:
        raise ValueError("cannot quantize a %s layer" % type(layer).__name__)
    if not hasattr(cls, "plan"):  # a language model's kind runs a position at a time
        raise ValueError("a %s layer is quantized with its language model (an Embedding "
                         "first): tinyattn.int8.quantize(model, token_ids)" % kind)
    return companion(cls, "convert").quantize(layer, stats, s_x, s_y, seq_len)


def _check_calibration(layers, x, seq_len):
    """ValueError naming calibration_x (or seq_len) unless it is rows the model can take."""
    from ..nn.checks import all_finite, require_float_rows

    if seq_len is not None and (not isinstance(seq_len, int) or seq_len < 1):
        raise ValueError("seq_len must be an int >= 1 or None, got %r" % (seq_len,))
    if not hasattr(x, "read"):
        require_float_rows("calibration_x (the calibration set)", x, _input_width(layers))
    elif _input_width(layers) not in (None, x.shape[1]):
        raise ValueError("calibration_x (%s) has %d columns; the model takes %d"
                         % (x.path, x.shape[1], _input_width(layers)))
    if not hasattr(x, "read") and not all_finite(x):
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
    from ..nn.checks import finite

    for name in stats:
        value = stats[name]
        if isinstance(value, dict):
            value = _not_finite(value)
            if value is not None:
                return name + "." + value
        elif not finite(value):
            return name
    return None


def _rows_a_sample(model, seq_len):
    """How many rows of calibration_x one sample is (its tokens, when the model takes them
    as rows)."""
    if isinstance(model, Sequential):
        from ..nn.flow import follow

        return follow(model.config())[1]
    if isinstance(model, Attention):
        return getattr(model, "seq_len", seq_len) or 1
    return 1


def _calibrate(layers, x, seq_len, batch_size, rows, mask):
    """_calibrate_batch over batch_size samples (of `rows` rows each) at a time, the larger
    of each max |.| kept."""
    import gc

    stats = None
    step = batch_size * rows
    for r0 in range(0, x.shape[0], step):
        gc.collect()  # the last batch's arrays go before this one's are made
        m = None if mask is None else mask[r0 // rows:(r0 + step) // rows, :].copy()
        batch = _calibrate_batch(layers, _rows(x, r0, min(r0 + step, x.shape[0])), seq_len, m)
        stats = batch if stats is None else _larger(stats, batch)
        batch = m = None
    return stats


def _rows(x, r0, r1):
    """Rows r0..r1-1 of the calibration set: a copy of the array's, or read from the file
    (checked finite: a file is never held whole)."""
    if not hasattr(x, "read"):
        return x[r0:r1, :].copy()
    from ..nn.checks import all_finite

    batch = x.read(r0, r1)
    if not all_finite(batch):
        raise ValueError("calibration_x (%s) holds NaN or infinity in rows %d..%d; it must "
                         "be finite rows of the model's input" % (x.path, r0, r1 - 1))
    return batch


def _larger(a, b):
    """Each max |.| of a replaced by b's where that is larger or NaN (lists of dicts, dicts
    of floats and of dicts, floats)."""
    if isinstance(a, list):
        return [_larger(u, v) for u, v in zip(a, b)]
    if isinstance(a, dict):
        return dict((name, _larger(a[name], b[name])) for name in a)
    return b if b > a or b != b else a


def _calibrate_batch(layers, x, seq_len, mask=None):
    """max|.| of every layer's input and output (and Q, K, V of attention; a layer with a
    calibrate method, the encoder's, says what it measures)."""
    stats = []
    for layer in layers:
        st = {"in": max_abs(x)}
        calibrate = getattr(layer, "calibrate", None)
        if calibrate is not None:
            x, extra = calibrate(x, mask)
            st.update(extra)
            stats.append(st)
            continue
        if isinstance(layer, Attention):
            st.update(layer.calibration_stats(x))
        if isinstance(layer, Attention) and not isinstance(layer, SelfAttention):
            if seq_len is None:
                raise ValueError("quantizing an Attention needs its seq_len")
            x = layer.forward(x, seq_len)
        elif mask is not None and takes_mask(layer):
            x = layer.forward(x, False, mask)
        else:
            x = layer.forward(x)
        st["out"] = max_abs(x)
        stats.append(st)
    return stats
