"""Speed of the int8 path against the float ulab path and a naive pure-MicroPython float loop.

`run()` prints one table: the Iris model on a batch of 16, and self-attention with
S in {16, 64}, E = 64, H = 4 (one sequence). Times are the mean of `repeats` calls, in ms;
ratios are from this one run. Nothing is asserted: speed is reported, never tested.
"""

import math
import time

from ulab import numpy as np

from .attention import Attention
from .model import iris_model
from .quant import quantize, quantize_tensor
from .rng import Rng


def _ms(call, repeats):
    call()  # warm up (allocations, first-call caches)
    start = time.ticks_us()
    for _ in range(repeats):
        call()
    return time.ticks_diff(time.ticks_us(), start) / 1000.0 / repeats


def _random(rows, cols, seed, scale=1.0):
    rng = Rng(seed)
    return np.array([rng.uniform(-scale, scale, cols) for _ in range(rows)])


# ---- the naive float loop: lists of Python floats, one multiply-add at a time -----------------
def _rows(a):
    return [row.tolist() for row in a]


def _naive_linear(x, W, b):
    out = []
    for row in x:
        out_row = []
        for j, w in enumerate(W):
            acc = b[j] if b is not None else 0.0
            for k in range(len(row)):
                acc += row[k] * w[k]
            out_row.append(acc)
        out.append(out_row)
    return out


def _naive_attention(x, p, H, S):
    """The float Attention's forward (no mask) on lists."""
    E = len(x[0])
    D = E // H
    scale = 1.0 / math.sqrt(D)
    Q = _naive_linear(x, p["Wq"], p["bq"])
    K = _naive_linear(x, p["Wk"], p["bk"])
    V = _naive_linear(x, p["Wv"], p["bv"])
    ctx = [[0.0] * E for _ in x]
    for b in range(len(x) // S):
        for h in range(H):
            c0 = h * D
            for i in range(b * S, (b + 1) * S):
                scores = []
                for j in range(b * S, (b + 1) * S):
                    acc = 0.0
                    for d in range(c0, c0 + D):
                        acc += Q[i][d] * K[j][d]
                    scores.append(acc * scale)
                top = max(scores)
                e = [math.exp(s - top) for s in scores]
                total = sum(e)
                for d in range(c0, c0 + D):
                    acc = 0.0
                    for j in range(S):
                        acc += e[j] * V[b * S + j][d]
                    ctx[i][d] = acc / total
    return _naive_linear(ctx, p["Wo"], p["bo"])


def _naive_iris(x, params):
    """The Iris model (Dense, ReLU, 4 tokens, Attention(8, 2), mean, Dense) on lists."""
    h = _naive_linear(x, params["0.W"], params["0.b"])
    h = [[v if v > 0.0 else 0.0 for v in row] for row in h]
    tokens = [row[t * 8:(t + 1) * 8] for row in h for t in range(4)]
    p = dict((name, params["3." + name]) for name in
             ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo"))
    a = _naive_attention(tokens, p, 2, 4)
    pooled = [[sum(a[b * 4 + t][c] for t in range(4)) / 4 for c in range(8)]
              for b in range(len(x))]
    return _naive_linear(pooled, params["5.W"], params["5.b"])


def _as_lists(params):
    out = {}
    for name, value in params.items():
        out[name] = None if value is None else (
            _rows(value) if len(value.shape) == 2 else value.tolist())
    return out


# ---- the cases -----------------------------------------------------------------------------
def _iris_case(repeats):
    model = iris_model(42)
    x = _random(16, 4, 7, 2.0)
    qmodel = quantize(model, _random(64, 4, 8, 2.0))
    params = _as_lists(dict((name, p) for name, p, _ in model.collect_params()))
    xs = _rows(x)
    return [_ms(lambda: qmodel.forward(x), repeats),
            _ms(lambda: model.forward(x), repeats),
            _ms(lambda: _naive_iris(xs, params), max(1, repeats // 4))]


def _attention_case(S, E, H, repeats):
    layer = Attention(E, H, seed=S)
    for name, param, _ in layer.collect_params():
        if name[0] == "b":
            param[:] = _random(1, E, len(name) + S, 0.1)[0, :]
    x = _random(S, E, 3 * S)
    qlayer = quantize(layer, x, seq_len=S).layers[0]
    xq = quantize_tensor(x, qlayer.scales["x"])
    params = _as_lists(dict((name, p) for name, p, _ in layer.collect_params()))
    xs = _rows(x)
    return [_ms(lambda: qlayer.forward(x, S), repeats),
            _ms(lambda: layer.forward(x, S), repeats),
            _ms(lambda: _naive_attention(xs, params, H, S), max(1, repeats // 4)),
            _ms(lambda: qlayer.forward_int(xq, S, E), repeats)]


def run(repeats=5, sizes=(16, 64)):
    """Print the table; returns its rows as (case, int8 ms, ulab ms, naive ms, kernels ms)."""
    rows = [tuple(["iris B=16"] + _iris_case(repeats) + [None])]
    for S in sizes:
        rows.append(tuple(["attn S=%d E=64 H=4" % S] + _attention_case(S, 64, 4, repeats)))
    print("%-20s %10s %10s %10s %12s %9s %9s" % ("case", "int8 ms", "ulab ms", "naive ms",
                                                 "kernels ms", "ulab/int8", "naive/int8"))
    for case, q, f, naive, kernels in rows:
        print("%-20s %10.2f %10.2f %10.2f %12s %9.2f %9.2f"
              % (case, q, f, naive, "-" if kernels is None else "%.2f" % kernels,
                 f / q, naive / q))
    return rows
