"""How an int8 encoder layer (encoder.py) is made from a float TransformerEncoderLayer: the
statistics of its intermediates (encoder_stats, run through the float parts' public
forwards) and its parts' conversions (layers_convert.py says what a conversion is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from .attention_convert import SelfAttention
from .encoder import QTransformerEncoderLayer
from .layers_convert import Activation, Dense
from .layers_schema import GELU
from .norm_convert import LayerNorm, add_multipliers
from .scales import max_abs, scale_for


def encoder_stats(layer, x, mask=None):
    """Run a float TransformerEncoderLayer on x (mask: its padding) through its parts' public
    forwards; returns (y, {name: max |.|}) of every intermediate the int8 layer quantizes
    (and Q, K, V)."""
    if layer.seq_len is None:
        raise ValueError("quantizing a TransformerEncoderLayer needs its seq_len: make it "
                         "with TransformerEncoderLayer(..., seq_len=S)")
    stats = {}

    def seen(name, value):
        stats[name] = max_abs(value)
        return value

    def sa(z):
        a = layer.self_attn.forward(z, layer.seq_len, mask=mask, causal=layer.causal)
        stats["attention"] = layer.self_attn.calibration_stats(z)
        return seen("a", a)

    def ff(z):
        f = seen("f1", layer.linear1.forward(z))
        f = seen("act", layer.activation.forward(f))
        return seen("f2", layer.linear2.forward(f))

    if layer.norm_first:
        h = seen("h", x + sa(seen("n1", layer.norm1.forward(x))))
        y = h + ff(seen("n2", layer.norm2.forward(h)))
    else:
        h = seen("h", layer.norm1.forward(seen("h0", x + sa(x))))
        y = layer.norm2.forward(seen("y0", h + ff(h)))
    stats["out"] = max_abs(y)
    return y, stats


class TransformerEncoderLayer:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        return TransformerEncoderLayer.from_float(layer, stats, s_x,
                                                   s_y or scale_for(stats["out"]))

    @staticmethod
    def from_float(layer, stats, s_x, s_y):
        """From a float TransformerEncoderLayer and its encoder_stats; output int8 at s_y."""
        sc = lambda name: scale_for(stats[name])  # noqa: E731
        S, parts = layer.seq_len, {}

        def attention(s_in):
            parts["self_attn"] = SelfAttention.from_float(layer.self_attn, stats["attention"],
                                                          s_in, sc("a"), S)
            return sc("a")

        def ff(s_in):
            relu = layer.activation_name == "relu"
            parts["linear1"] = Dense.from_float(layer.linear1, s_in, sc("act" if relu else "f1"),
                                                0 if relu else -128)
            s_f = sc("act")
            parts["act"] = None if relu else Activation.from_float(
                GELU, layer.activation.forward, sc("f1"), s_f)
            parts["linear2"] = Dense.from_float(layer.linear2, s_f, sc("f2"))
            return sc("f2")

        def norm(name, s_in, s_out):
            parts[name] = LayerNorm.from_float(getattr(layer, name), s_in, s_out)
            return s_out

        if layer.norm_first:
            s_a = attention(norm("norm1", s_x, sc("n1")))
            s_h = sc("h")
            adds = [add_multipliers(s_x, s_a, s_h)]
            adds.append(add_multipliers(s_h, ff(norm("norm2", s_h, sc("n2"))), s_y))
        else:
            s_h0 = sc("h0")
            adds = [add_multipliers(s_x, attention(s_x), s_h0)]
            s_h = norm("norm1", s_h0, sc("h"))
            s_y0 = sc("y0")
            adds.append(add_multipliers(s_h, ff(s_h), s_y0))
            norm("norm2", s_y0, s_y)
        return QTransformerEncoderLayer(parts, adds, layer.norm_first, S, layer.causal, s_x,
                                        s_y)
