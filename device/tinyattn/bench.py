"""Speed and memory of every path: `import tinyattn.bench; tinyattn.bench.run()`.

Prints markdown tables: Attention forward and forward plus backward on the float ulab path,
forward on the int8 viper path, both on naive pure-MicroPython loops (lists of floats, one
multiply-add at a time), with ratios from this one run; the heap each needs, beside
cache_bytes() and the spec's formulas; the largest S that trains in this heap; Iris training
and inference. Timing: one warm-up call, then up to `repeats` calls, the median.

A call whose predicted time (the path's time per multiply-add on the last, smaller, shape
measured) exceeds `cap` seconds is skipped ("skip"); one that raises MemoryError is "OOM".
Nothing is asserted: speed is reported, never tested.
"""

import gc
import json
import math
import sys
import time

import ulab
from ulab import numpy as np

from .attention import Attention
from .rng import Rng

FULL = {"B": (1, 16), "S": (4, 16, 32, 64), "E": (8, 32, 64), "H": (2, 4)}
QUICK = {"B": (1, 2), "S": (4,), "E": (8,), "H": (2,)}
PATHS = ("float_fwd", "float_fwd_bwd", "float_fwd_bwd_ckpt", "int8_fwd", "naive_fwd",
         "naive_fwd_bwd")
PEAKS = ("peak_fwd_bwd", "peak_fwd_bwd_ckpt", "peak_int8_fwd")
PEAK_PATHS = ("float_fwd_bwd", "float_fwd_bwd_ckpt", "int8_fwd")
OOM, SKIP = "OOM", "skip"
KB = 1024.0


# ---- measuring -----------------------------------------------------------------------------
def _seconds(call):
    start = time.ticks_us()
    call()
    return time.ticks_diff(time.ticks_us(), start) / 1e6


def median_seconds(call, repeats=5, budget=1.0):
    """Median seconds of call(): a warm-up call, then up to `repeats` calls (at least 3),
    fewer when they would take more than `budget` seconds. Returns (median, calls timed)."""
    gc.collect()
    first = _seconds(call)
    runs = max(3, min(repeats, int(budget / max(first, 1e-6))))
    times = []
    for _ in range(runs):
        gc.collect()
        times.append(_seconds(call))
    times.sort()
    middle = len(times) // 2
    median = times[middle] if len(times) % 2 else (times[middle - 1] + times[middle]) / 2
    return median, runs


def _leave_free(n):
    """A ballast filling the heap but for about n bytes, left free in the largest pieces the
    heap has (one, when it can); returns (ballast, free bytes)."""
    gc.collect()
    slots = [None] * 512  # holds the ballast; made first, never resized (no freed storage)
    reserve, left, size = None, n, n
    while left > 0 and size >= 16:  # what stays free: reserved first, released at the end
        try:
            reserve = (bytearray(size), reserve)
            left -= size
            size = min(size, left)
        except MemoryError:
            size //= 2
    if left > 0:
        return None, gc.mem_free()
    size, i = gc.mem_free(), 0
    while size >= 16 and i < len(slots):  # largest pieces first, then the holes between
        try:
            slots[i] = bytearray(size)
            i += 1
            size = min(size, gc.mem_free())
        except MemoryError:
            size //= 2
    reserve = None
    gc.collect()
    return slots, gc.mem_free()


def _completes(call):
    try:
        call()
        return True
    except MemoryError:
        return False


def peak_bytes(call, start=4096):
    """The smallest free heap (gc.mem_free()) with which call() completes, in few pieces.

    Found by trying: a ballast fills the rest of the heap; doubling from `start`, then halving
    the gap to 1/32 (or as fine as the heap allows). None: the whole heap fails.
    """
    low, n = 0, max(start, 1024)
    while True:
        ballast, free = _leave_free(n)
        done = _completes(call)
        ballast = None
        if done:
            high = free
            break
        low = free
        if free < n:  # no ballast left to take away
            return None
        n *= 2
    while high - low > max(256, high // 32):
        ballast, free = _leave_free((low + high) // 2)
        if not low < free < high:  # the heap's holes allow no finer step
            ballast = None
            break
        if _completes(call):
            high = free
        else:
            low = free
        ballast = None
    gc.collect()
    return high


def held_bytes(call):
    """Heap still allocated after call() (its result dropped), after gc.collect()."""
    gc.collect()
    before = gc.mem_alloc()
    call()
    gc.collect()
    return gc.mem_alloc() - before


# ---- the naive loops: lists of Python floats ------------------------------------------------
def _mm_t(a, b):
    """a b^T for lists of rows."""
    out = []
    for row in a:
        out_row = []
        for col in b:
            acc = 0.0
            for k in range(len(row)):
                acc += row[k] * col[k]
            out_row.append(acc)
        out.append(out_row)
    return out


def _t(a):
    return [list(col) for col in zip(*a)]


def _add_bias(rows, b):
    for row in rows:
        for j in range(len(row)):
            row[j] += b[j]
    return rows


def _col_sums(rows):
    return [sum(col) for col in zip(*rows)]


def _block(rows, r0, r1, c0, c1):
    return [row[c0:c1] for row in rows[r0:r1]]


def _put(rows, r0, c0, block):
    for i, row in enumerate(block):
        rows[r0 + i][c0:c0 + len(row)] = row


def naive_forward(x, p, S, H):
    """The float Attention's forward (no mask) on lists; returns (y, cache)."""
    E = len(x[0])
    D = E // H
    scale = 1.0 / math.sqrt(D)
    Q = _add_bias(_mm_t(x, p["Wq"]), p["bq"])
    K = _add_bias(_mm_t(x, p["Wk"]), p["bk"])
    V = _add_bias(_mm_t(x, p["Wv"]), p["bv"])
    ctx = [[0.0] * E for _ in x]
    weights = []
    for r0 in range(0, len(x), S):
        for c0 in range(0, E, D):
            scores = _mm_t(_block(Q, r0, r0 + S, c0, c0 + D), _block(K, r0, r0 + S, c0, c0 + D))
            A = []
            for row in scores:
                top = max(row)
                e = [math.exp((s - top) * scale) for s in row]
                total = sum(e)
                A.append([v / total for v in e])
            weights.append(A)
            _put(ctx, r0, c0, _mm_t(A, _t(_block(V, r0, r0 + S, c0, c0 + D))))
    y = _add_bias(_mm_t(ctx, p["Wo"]), p["bo"])
    return y, (x, Q, K, V, weights, ctx)


def naive_backward(dy, p, cache, S, H):
    """Gradients of naive_forward: returns (dx, {"dWq": ..., "dbq": ..., ...})."""
    x, Q, K, V, weights, ctx = cache
    E = len(x[0])
    D = E // H
    scale = 1.0 / math.sqrt(D)
    grads = {"dWo": _mm_t(_t(dy), _t(ctx)), "dbo": _col_sums(dy)}
    dctx = _mm_t(dy, _t(p["Wo"]))
    dQ, dK, dV = [[[0.0] * E for _ in x] for _ in range(3)]
    blocks = iter(weights)
    for r0 in range(0, len(x), S):
        for c0 in range(0, E, D):
            A = next(blocks)
            q, k = _block(Q, r0, r0 + S, c0, c0 + D), _block(K, r0, r0 + S, c0, c0 + D)
            dc = _block(dctx, r0, r0 + S, c0, c0 + D)
            dA = _mm_t(dc, _block(V, r0, r0 + S, c0, c0 + D))
            _put(dV, r0, c0, _mm_t(_t(A), _t(dc)))
            dS = []
            for a_row, da_row in zip(A, dA):
                inner = sum(a * da for a, da in zip(a_row, da_row))
                dS.append([a * (da - inner) * scale for a, da in zip(a_row, da_row)])
            _put(dQ, r0, c0, _mm_t(dS, _t(k)))
            _put(dK, r0, c0, _mm_t(_t(dS), _t(q)))
    dx = [[0.0] * E for _ in x]
    for name, d in (("q", dQ), ("k", dK), ("v", dV)):
        grads["dW" + name] = _mm_t(_t(d), _t(x))
        grads["db" + name] = _col_sums(d)
        for row, part in zip(dx, _mm_t(d, _t(p["W" + name]))):
            for j in range(E):
                row[j] += part[j]
    return dx, grads


# ---- one shape -------------------------------------------------------------------------------
def _random(rows, cols, seed, scale=1.0):
    return Rng(seed).uniform_matrix(rows, cols, -scale, scale)


def _lists(a):
    return [row.tolist() for row in a]


def macs(B, S, E):
    """Multiply-adds of one forward: four projections and two S x S products per sequence."""
    return B * (4 * S * E * E + 2 * S * S * E)


def _fwd_bwd(layer, x, S):
    def call():
        try:
            layer.backward(layer.forward(x, S))
        finally:  # as SelfAttention does (and after a MemoryError): the next call starts empty
            layer._clear_caches()
    return call


def _setup(B, S, E, H):
    """The float layer (non-zero biases), its checkpoint=True twin, the input and the float
    and int8 calls (the int8 layer's scales come from the first sequence)."""
    from .quant import quantize

    layer = Attention(E, H, seed=S + E)
    for name, param, _ in layer.collect_params():
        if name[0] == "b":  # non-zero biases, so every path adds them for real
            param[:] = _random(1, E, len(name) + S, 0.1)[0, :]
    lean = Attention(E, H, checkpoint=True)
    for name, param, _ in layer.collect_params():
        getattr(lean, name)[:] = param
    x = _random(B * S, E, 3 * S)
    calls = {"float_fwd": lambda: layer.forward(x, S),
             "float_fwd_bwd": _fwd_bwd(layer, x, S),
             "float_fwd_bwd_ckpt": _fwd_bwd(lean, x, S)}
    try:
        qlayer = quantize(layer, x[0:S, :], seq_len=S).layers[0]
        calls["int8_fwd"] = lambda: qlayer.forward(x, S)
    except MemoryError:
        pass
    layer._clear_caches()
    return layer, lean, x, calls


def _shape(B, S, E, H, repeats, cap, peak_cap, rates):
    """One row of results: every path's median ms (or OOM / skip) and the heap figures."""
    work = macs(B, S, E)
    row = {"B": B, "S": S, "E": E, "H": H, "macs": work, "runs": {}}
    layer, lean, x, calls = _setup(B, S, E, H)
    row["params"] = layer.num_params()
    row["spec_A"] = B * H * S * S
    row["cache_bytes"] = layer.cache_bytes(B, S)
    row["cache_bytes_ckpt"] = lean.cache_bytes(B, S)
    try:
        params = {}
        for name, param, _ in layer.collect_params():
            params[name] = _lists(param) if name[0] == "W" else param.tolist()
        xs = _lists(x)
        calls["naive_fwd"] = lambda: naive_forward(xs, params, S, H)
        calls["naive_fwd_bwd"] = lambda: _naive_step(xs, params, S, H)
    except MemoryError:
        pass
    for path in PATHS:
        if path not in calls:
            row[path] = OOM
            continue
        units = work * (3 if "bwd" in path else 1)
        rate = rates.get(path)
        if rate is not None and rate * units > cap:
            row[path] = SKIP
            continue
        try:
            seconds, runs = median_seconds(calls[path], repeats, cap)
        except MemoryError:
            row[path] = OOM
            continue
        finally:
            layer._clear_caches()
            lean._clear_caches()
        rates[path] = seconds / units
        row[path] = seconds * 1000.0
        row["runs"][path] = runs
    calls.pop("naive_fwd", None)
    calls.pop("naive_fwd_bwd", None)
    xs = params = None
    for key, net in (("held", layer), ("held_ckpt", lean)):
        try:
            row[key] = held_bytes(lambda: net.forward(x, S))
        except MemoryError:
            row[key] = OOM
        net._clear_caches()
    for key, path in zip(PEAKS, PEAK_PATHS):
        ms = row[path]
        if ms in (OOM, SKIP):
            row[key] = ms
        elif peak_cap is None:
            row[key] = None
        elif ms > peak_cap * 1000.0:
            row[key] = SKIP
        else:
            row[key] = _peak(calls[path], row["held"], layer, lean)
    return row


def _naive_step(xs, params, S, H):
    y, cache = naive_forward(xs, params, S, H)
    return naive_backward(y, params, cache, S, H)


def _peak(call, held, layer, lean):
    try:
        return peak_bytes(call, start=held if isinstance(held, int) else 4096)
    finally:
        layer._clear_caches()
        lean._clear_caches()


def peaks(B, S, E, H):
    """{peak name: bytes or None} for one shape (the host runs this in a heap of its size)."""
    layer, lean, x, calls = _setup(B, S, E, H)
    held = held_bytes(lambda: layer.forward(x, S))
    layer._clear_caches()
    return dict((key, _peak(calls[path], held, layer, lean) if path in calls else OOM)
                for key, path in zip(PEAKS, PEAK_PATHS))


# ---- the largest S that trains ----------------------------------------------------------------
def fits(S, embed_dim=64, num_heads=4, checkpoint=False):
    """Whether forward plus backward of Attention(embed_dim, num_heads) on one sequence of S
    tokens fits in the free heap (the layer, its gradients and the input made here too)."""
    layer = x = None
    gc.collect()
    try:
        layer = Attention(embed_dim, num_heads, checkpoint=checkpoint, seed=1)
        x = _random(S, embed_dim, S)
        layer.backward(layer.forward(x, S))
        return True
    except MemoryError:
        return False
    finally:
        layer = x = None
        gc.collect()


def largest_seq_len(try_fit, limit=4096):
    """The largest S <= limit with try_fit(S) true: doubling from 4, then bisection (0: none)."""
    good, bad = 0, None
    S = 4
    while S <= limit:
        if not try_fit(S):
            bad = S
            break
        good, S = S, 2 * S
    if bad is None:
        return good
    while bad - good > 1:
        middle = (good + bad) // 2
        if try_fit(middle):
            good = middle
        else:
            bad = middle
    return good


# ---- Iris --------------------------------------------------------------------------------------
def _naive_iris(x, p):
    """The Iris model (Dense, ReLU, 4 tokens of 8, Attention(8, 2), mean, Dense) on lists."""
    h = _add_bias(_mm_t(x, p["0.W"]), p["0.b"])
    tokens = [[v if v > 0.0 else 0.0 for v in row[t * 8:(t + 1) * 8]]
              for row in h for t in range(4)]
    attention = dict((name[2:], value) for name, value in p.items() if name[0] == "3")
    a, _ = naive_forward(tokens, attention, 4, 2)
    pooled = [[sum(a[b * 4 + t][c] for t in range(4)) / 4 for c in range(8)]
              for b in range(len(x))]
    return _add_bias(_mm_t(pooled, p["5.W"]), p["5.b"])


def iris(repeats=5, budget=1.0):
    """Rows (what, batch, ms a call, ms a sample) for training and inference of the Iris model."""
    from .data import load_iris
    from .model import iris_model, train
    from .optim import Adam
    from .quant import quantize

    train_set, test_set = load_iris().split(0.2, seed=42)
    model = iris_model(42)
    optimizer = Adam(model.collect_params(), lr=1e-3)
    rows = []
    n = len(train_set)
    epoch, _ = median_seconds(lambda: train(model, train_set, epochs=1, optimizer=optimizer,
                                            log_every=0), repeats, budget)
    rows.append(("training epoch (%d rows, Adam)" % n, 16, epoch * 1000.0, epoch * 1000.0 / n))
    qmodel = quantize(model, train_set.X)
    params = {}
    for name, param, _ in model.collect_params():
        params[name] = _lists(param) if len(param.shape) == 2 else param.tolist()
    for batch in (16, 1):
        x = test_set.X[0:batch, :]
        xs = _lists(x)
        for what, call in (("float forward", lambda: model.forward(x)),
                           ("int8 forward", lambda: qmodel.forward(x)),
                           ("naive forward", lambda: _naive_iris(xs, params))):
            seconds, _ = median_seconds(call, repeats, budget)
            rows.append((what, batch, seconds * 1000.0, seconds * 1000.0 / batch))
    return rows


# ---- the report ---------------------------------------------------------------------------------
def header():
    """Interpreter, ulab kind and heap, as a dict."""
    impl = sys.implementation
    standin = ulab.__version__ == "stand-in"
    gc.collect()
    return {
        "interpreter": "%s %s" % (impl.name, ".".join(str(v) for v in impl.version[:3])),
        "machine": getattr(impl, "_machine", sys.platform),
        "platform": sys.platform,
        "ulab": "stand-in" if standin else ulab.__version__,
        "float": "float32" if np.float == 102 else "float64",
        "heap_bytes": gc.mem_free() + gc.mem_alloc(),
        "free_bytes": gc.mem_free(),
    }


def _ms(v):
    if not isinstance(v, float):
        return "-" if v is None else v
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v if v >= 0.1 \
        else "%.3f" % v


def _ratio(a, b):
    if not isinstance(a, float) or not isinstance(b, float) or b <= 0.0:
        return "-"
    return "%.1f" % (a / b) if a / b >= 10 else "%.2f" % (a / b)


def _kb(v):
    if not isinstance(v, int):
        return "-" if v is None else v
    return "%.1f" % (v / KB)


def table(head, rows, out=print):
    """A markdown table."""
    out("| " + " | ".join(head) + " |")
    out("|" + "|".join("---" for _ in head) + "|")
    for row in rows:
        out("| " + " | ".join(str(cell) for cell in row) + " |")
    out("")


def report(results, out=print):
    """Print the markdown tables of `results` (what collect() returns)."""
    h, s = results["header"], results["settings"]
    ulab_kind = h["ulab"] if h["ulab"] != "stand-in" else (
        "STAND-IN (ulab's numpy in pure MicroPython, not ulab: its float and heap figures say "
        "nothing about ulab's)")
    out("## tinyattn bench: %s on %s (%s)" % (h["interpreter"], h["machine"], h["platform"]))
    out("")
    out("- ulab: %s; arrays %s; heap %.0f KB, %.0f KB free at the start"
        % (ulab_kind, h["float"], h["heap_bytes"] / KB, h["free_bytes"] / KB))
    out("- time: a warm-up call, then up to %d calls (at least 3, fewer when they pass %.1f s),"
        " the median in ms; ratios from this run; skip: predicted over %.1f s a call; OOM:"
        " MemoryError" % (s["repeats"], s["cap"], s["cap"]))
    out("")
    rows = results["attention"]
    out("### Attention time (ms a call; f+b = forward plus backward)")
    out("")
    table(("B", "S", "E", "H", "float fwd", "float f+b", "float f+b ckpt", "int8 fwd",
           "naive fwd", "naive f+b", "float/int8 fwd", "naive/float fwd", "naive/float f+b",
           "naive/int8 fwd"),
          [(r["B"], r["S"], r["E"], r["H"]) + tuple(_ms(r[p]) for p in PATHS) + (
              _ratio(r["float_fwd"], r["int8_fwd"]), _ratio(r["naive_fwd"], r["float_fwd"]),
              _ratio(r["naive_fwd_bwd"], r["float_fwd_bwd"]),
              _ratio(r["naive_fwd"], r["int8_fwd"])) for r in rows], out)
    out("### Attention heap (KB)")
    out("")
    out("params: (4E^2+4E) x 4 bytes; A: the spec's B*H*S^2 attention cache x 4 bytes; "
        "cache_bytes(): what the layer says its caches hold; held: gc.mem_alloc() still in use "
        "after a forward (its output dropped), i.e. the caches as allocated; peak: the smallest "
        "free heap, in the largest pieces the heap has (a ballast fills the rest), with which "
        "the call completes, "
        "found by trying to 1/32: what the call needs beyond the layer and input that exist "
        "before it (gc.mem_free() after gc.collect()); ckpt: checkpoint=True. Peaks are "
        "searched only where a call (on the unix port: the shape's float f+b) takes under "
        "%.2f s, else skip." % s["peak_cap"])
    out("")
    table(("B", "S", "E", "H", "params", "A (spec)", "cache_bytes()", "held", "peak f+b",
           "cache_bytes() ckpt", "held ckpt", "peak f+b ckpt", "peak int8 fwd"),
          [(r["B"], r["S"], r["E"], r["H"], _kb(4 * r["params"]), _kb(4 * r["spec_A"]),
            _kb(r["cache_bytes"]), _kb(r["held"]), _kb(r["peak_fwd_bwd"]),
            _kb(r["cache_bytes_ckpt"]), _kb(r["held_ckpt"]), _kb(r["peak_fwd_bwd_ckpt"]),
            _kb(r["peak_int8_fwd"])) for r in rows], out)
    if results.get("largest"):
        out("### Largest S for forward plus backward, E=64, H=4, B=1 (found by trying)")
        out("")
        table(("heap", "checkpoint", "largest S"),
              [(r["heap"], r["checkpoint"], r["S"]) for r in results["largest"]], out)
    if results.get("iris"):
        out("### Iris model (Dense 4-32, ReLU, Attention(8, 2) on 4 tokens, pool, Dense 8-3)")
        out("")
        table(("what", "batch", "ms a call", "ms a sample"),
              [(w, b, _ms(ms), _ms(per)) for w, b, ms, per in results["iris"]], out)


def collect(quick=False, repeats=5, cap=1.0, peak_cap=0.5, largest=True):
    """Measure everything; returns a dict (see report). quick: a tiny grid, for tests."""
    grid = QUICK if quick else FULL
    results = {"header": header(),
               "settings": {"repeats": repeats, "cap": cap, "peak_cap": peak_cap,
                            "quick": quick}}
    shapes = [(B, S, E, H) for B in grid["B"] for S in grid["S"] for E in grid["E"]
              for H in grid["H"]]
    order = sorted(range(len(shapes)), key=lambda i: macs(*shapes[i][:3]))
    rates = {}
    rows = [None] * len(shapes)
    for i in order:
        rows[i] = _shape(*shapes[i], repeats=repeats, cap=cap, peak_cap=peak_cap, rates=rates)
        gc.collect()
    results["attention"] = rows
    if largest:
        heap = "this heap: %.0f KB" % (results["header"]["heap_bytes"] / KB)
        results["largest"] = [
            {"heap": heap, "checkpoint": ckpt,
             "S": largest_seq_len(lambda S: fits(S, checkpoint=ckpt), 8 if quick else 4096)}
            for ckpt in (False, True)]
    results["iris"] = iris(repeats, cap)
    return results


def run(quick=False, repeats=5, cap=1.0, peak_cap=0.5, largest=True, emit_json=False):
    """Measure and print the tables (at a board's REPL: `tinyattn.bench.run()`).

    quick: one tiny shape; repeats: timed calls at most; cap: seconds a call may take;
    peak_cap: the heap search runs for calls under this many seconds; largest: search the
    largest S in this heap; emit_json: also print the results as one line "@@JSON {...}".
    """
    results = collect(quick, repeats, cap, peak_cap, largest)
    report(results)
    if emit_json:
        print("@@JSON " + json.dumps(results))
