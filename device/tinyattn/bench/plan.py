"""What `make bench` measures, in one place for both ends: the device (tinyattn.bench) and the
host (tinyattn_host.bench, which loads this file under CPython: no MicroPython-only import).

The device prints each result as one line, MARK followed by a JSON object with a "kind".
"""

MARK = "@@BENCH "
FULL = {"B": (1, 16), "S": (4, 16, 32, 64), "EH": ((8, 2), (32, 4), (64, 4))}
QUICK = {"B": (1, 2), "S": (4,), "EH": ((8, 2),)}
PATHS = ("float_fwd", "float_fwd_bwd", "float_fwd_bwd_ckpt", "int8_fwd")
IRIS_BATCHES = (16, 1)
# the largest-S search: Attention(64, 4) forward plus backward on one sequence
LARGEST_E, LARGEST_H, LARGEST_LIMIT = 64, 4, 512
QUICK_LIMIT = 6
HEAP_S = (4, 16, 32, 64)  # the smallest heap for these S (unix port: -X heapsize per trial)
# streaming (bench/stream.py): the per-token cost at these windows W, the vowels model's sizes
STREAM_W, QUICK_STREAM_W = (16, 32, 64), (4,)
DECODER_C, QUICK_DECODER_C = (8, 32, 128), (4,)  # contexts of the decoder's per-token cost
STREAM_F, STREAM_E, STREAM_H, STREAM_FF, STREAM_OUT = 12, 24, 4, 48, 9


def stream_config(W):
    """The streamed model: Dense F -> E, positional table of W rows, one causal encoder layer
    (E, H, feed-forward FF, ReLU, post-norm, seq_len W), Dense E -> OUT: one output a token."""
    return [["Dense", STREAM_F, STREAM_E, True], ["PositionalEmbedding", W, STREAM_E],
            ["TransformerEncoderLayer", STREAM_E, STREAM_H, STREAM_FF, 0.0, "relu", False, 1e-5,
             W, True], ["Dense", STREAM_E, STREAM_OUT, True]]


def decoder_config():
    """llama2.c's stories260K shape (bench/decoder.py)."""
    return ([["Embedding", 512, 64]]
            + [["DecoderBlock", 64, 8, 4, 172, 512, 1e-5, "pairs", 10000.0]] * 5
            + [["RMSNorm", 64, 1e-5], ["Classifier", 64, 512, False]])


def macs(B, S, E):
    """Multiply-adds of one Attention forward: four projections and two S x S products."""
    return B * (4 * S * E * E + 2 * S * S * E)


def shapes(quick=False):
    """The (B, S, E, H) measured, cheapest first."""
    grid = QUICK if quick else FULL
    found = [(B, S, E, H) for B in grid["B"] for S in grid["S"] for E, H in grid["EH"]]
    return sorted(found, key=lambda shape: macs(*shape[:3]))


def largest_seq_len(try_fit, limit):
    """The largest S <= limit such that try_fit(s) holds for every s = 1 .. S (0: not even
    S = 1). A scan upward, no bisection: fragmentation makes "fits" non-monotonic."""
    S = 0
    while S < limit and try_fit(S + 1):
        S += 1
    return S
