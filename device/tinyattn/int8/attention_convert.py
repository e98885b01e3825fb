"""How an int8 attention (attention.py) is made from a float Attention (layers_convert.py says
what a conversion is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from .attention import PROJECTIONS, QAttention
from .constants import EXP_LIMIT, EXP_STEPS, PROB_ONE
from .fixedpoint import fixed_point
from .scales import int32_bias, int8_weights, multiplier, scale_for


class SelfAttention:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        """From a SelfAttention (its own seq_len) or a lone Attention (seq_len given)."""
        return SelfAttention.from_float(layer, stats, s_x, s_y,
                                        getattr(layer, "seq_len", seq_len))

    @staticmethod
    def from_float(layer, stats, s_x, s_y, seq_len):
        """From a float Attention (its num_kv_heads, if it has one) and its
        calibration_stats() {q, k, v: max |.|}."""
        E, D = layer.embed_dim, layer.head_dim
        H_kv = getattr(layer, "num_kv_heads", None) or layer.num_heads
        weights, biases, scales = {}, {}, {"x": s_x, "y": s_y}
        for n in PROJECTIONS:
            weights[n], scales["w" + n] = int8_weights(getattr(layer, "W" + n))
        mults = {}
        for n in ("q", "k", "v"):
            scales[n] = scale_for(stats[n])
            s_acc = s_x * scales["w" + n]
            biases[n] = int32_bias(getattr(layer, "b" + n), s_acc, E)  # depth E
            mults[n] = multiplier(s_acc, scales[n])
        # each context row is a convex combination of V rows: V's scale never saturates,
        # whatever mask or causal flag the calibration did not see
        scales["ctx"] = scales["v"]
        s_acc = scales["ctx"] * scales["wo"]
        biases["o"] = int32_bias(layer.bo, s_acc, E)
        mults["out"] = None if s_y is None else multiplier(s_acc, s_y)
        score = scales["q"] * scales["k"] / (D ** 0.5) * EXP_STEPS
        mults["score"] = fixed_point(score, EXP_LIMIT)
        mults["ctx"] = multiplier(scales["v"] / PROB_ONE, scales["ctx"])
        return QAttention(E, layer.num_heads, seq_len, weights, biases, mults, scales,
                          None if H_kv == layer.num_heads else H_kv)
