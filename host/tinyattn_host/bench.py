"""`make bench`: speed and memory of every path, as markdown tables, JSON and a PNG plot.

    python -m tinyattn_host.bench [--port P] [--out build/bench] [--quick] [--repeats N]

With a port, `tinyattn.bench.run()` runs on the board (deployed first when needed) and measures
everything in its own heap. Without one, the MicroPython unix port ($MICROPYTHON, or the one
installed here, with the ulab stand-in when it has no ulab) measures the times; then each
shape's heap peaks are searched in a process whose heap suits that shape, and the largest S
that trains is found by trying S in processes started with `-X heapsize=256k` and `2m`.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from . import cli, unixport
from .ports import choose

DEFAULT_OUT = Path("build") / "bench"
TARGET_HEAPS = (("256k", 256 * 1024), ("2m", 2 * 1024 * 1024))
PEAK_PATHS = (("peak_fwd_bwd", "float_fwd_bwd"), ("peak_fwd_bwd_ckpt", "float_fwd_bwd_ckpt"),
              ("peak_int8_fwd", "int8_fwd"))
JSON_MARK = "@@JSON "

# forward plus backward of Attention(E, H) on one sequence of S tokens, nothing else loaded
_FITS = """\
import sys
from tinyattn.attention import Attention
from tinyattn.rng import Rng
from ulab import numpy as np
S, E, H, ckpt = [int(a) for a in sys.argv[1:5]]
try:
    layer = Attention(E, H, checkpoint=bool(ckpt), seed=1)
    rng = Rng(S)
    x = np.array([rng.uniform(-1.0, 1.0, E) for _ in range(S)])
    layer.backward(layer.forward(x, S))
    print("fits")
except MemoryError:
    print("MemoryError")
"""


def _device(code, heap, args=(), timeout=3600):
    """Run MicroPython code on the unix port; return its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench_case.py"
        script.write_text(code)
        return unixport.run_file(script, heap=heap, timeout=timeout, args=args)


def _json_line(output):
    for line in output.splitlines():
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK):])
    raise ValueError("no %r line in the device's output:\n%s" % (JSON_MARK, output[-2000:]))


def fits(S, heap, embed_dim=64, num_heads=4, checkpoint=False):
    """Whether forward plus backward fits a fresh unix port started with -X heapsize=heap."""
    try:
        out = _device(_FITS, heap, args=[str(v) for v in (S, embed_dim, num_heads,
                                                          int(checkpoint))], timeout=600)
    except unixport.MicroPythonError as err:
        if err.kind == "MemoryError":  # already while importing
            return False
        raise
    return out.strip().endswith("fits")


def largest_seq_len(try_fit, limit=4096):
    """The largest S <= limit with try_fit(S) true: doubling from 4, then bisection (0: none).

    The same search as tinyattn.bench.largest_seq_len, here with one process a trial."""
    good, bad, S = 0, None, 4
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


def _peak_heap(row, scale):
    """A heap for the peak search of one shape: a few times what it holds, in KB."""
    held = max(v for v in (row["held"], row["held_ckpt"], 0) if isinstance(v, int))
    need = 4 * held + 16 * 4 * row["params"] + 512 * 1024
    return "%dk" % (need * scale // 1024)


def fill_peaks(results, peak_cap, log):
    """Search each shape's heap peaks in a process of a suitable heap; "skip" for the shapes
    whose float forward plus backward takes more than peak_cap seconds (the process sets the
    shape up again, which is what takes long with the stand-in)."""
    for row in results["attention"]:
        slow = not isinstance(row["float_fwd_bwd"], float) or (
            row["float_fwd_bwd"] > peak_cap * 1000.0)
        todo = []
        for key, path in PEAK_PATHS:
            ms = row[path]
            if not isinstance(ms, float):
                row[key] = ms
            elif slow:
                row[key] = "skip"
            else:
                todo.append(key)
        if not todo:
            continue
        found = dict((key, None) for key in todo)
        for scale in (1, 4, 16):  # a larger heap when this one is too small for the shape
            heap = _peak_heap(row, scale)
            try:
                found = _json_line(_device(
                    "import json, tinyattn.bench as b\nprint(%r + json.dumps(b.peaks(%d, %d, %d, "
                    "%d)))" % (JSON_MARK, row["B"], row["S"], row["E"], row["H"]), heap))
            except unixport.MicroPythonError as err:
                if err.kind != "MemoryError":
                    raise
                continue
            if all(found[key] is not None for key in todo):
                break
        log("peaks B=%d S=%d E=%d H=%d in a %s heap: %s"
            % (row["B"], row["S"], row["E"], row["H"], heap,
               ", ".join("%s %s" % (key, found[key]) for key in todo)))
        for key in todo:
            row[key] = found[key]
    results["settings"]["peak_cap"] = peak_cap


def fill_largest(results, limit, log):
    results["largest"] = []
    for name, size in TARGET_HEAPS:
        for checkpoint in (False, True):
            S = largest_seq_len(lambda S: fits(S, name, checkpoint=checkpoint), limit)
            log("largest S in -X heapsize=%s, checkpoint=%s: %d" % (name, checkpoint, S))
            results["largest"].append({"heap": "%d KB (-X heapsize=%s)" % (size // 1024, name),
                                       "checkpoint": checkpoint, "S": S})


def on_unix_port(quick, repeats, cap, peak_cap, heap, log):
    """Measure on the unix port; returns (results, markdown)."""
    command = unixport.interpreter()
    log("measuring on %s (ulab: %s), heap %s" % (
        command, "real" if unixport.has_ulab(command) else "stand-in", heap))
    results = _json_line(_device(
        "import json, tinyattn.bench as b\nprint(%r + json.dumps(b.collect(quick=%r, "
        "repeats=%d, cap=%r, peak_cap=None, largest=False)))" % (JSON_MARK, quick, repeats, cap),
        heap))
    fill_peaks(results, peak_cap, log)
    fill_largest(results, 8 if quick else 4096, log)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "results.json"
        data.write_text(json.dumps(results))
        text = _device("import json, tinyattn.bench as b\nb.report(json.load(open(%r)))"
                       % str(data), heap)
    return results, text


def on_board(port, quick, repeats, cap, peak_cap, log):
    """Run tinyattn.bench.run() on the board at `port`; returns (results, markdown)."""
    from .board import Board

    pending = []

    def consume(data):  # echo the tables as they come, not the JSON line
        pending.append(data.decode(errors="replace"))
        *done, rest = "".join(pending).split("\n")
        pending[:] = [rest]
        for line in done:
            if not line.startswith(JSON_MARK):
                print(line.rstrip("\r"), flush=True)

    with Board(port=port, out=log) as board:
        log("running tinyattn.bench.run() on %s (this takes minutes)" % port)
        out, err = board.transport.exec_raw(
            "import tinyattn.bench as b\nb.run(quick=%r, repeats=%d, cap=%r, peak_cap=%r, "
            "emit_json=True)" % (quick, repeats, cap, peak_cap), timeout=None,
            data_consumer=consume)
    if err:
        raise RuntimeError("tinyattn.bench.run() failed on the board:\n" + err.decode())
    output = out.decode().replace("\r\n", "\n")
    results = _json_line(output)
    text = "\n".join(l for l in output.splitlines() if not l.startswith(JSON_MARK)) + "\n"
    return results, text


def plot(results, path):
    """Time and heap against S (E=64, H=4) for each path and batch, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = results["attention"]
    E = max(r["E"] for r in rows)
    H = max(r["H"] for r in rows)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for B in sorted({r["B"] for r in rows}):
        mine = sorted((r for r in rows if r["B"] == B and r["E"] == E and r["H"] == H),
                      key=lambda r: r["S"])
        for key, style in (("float_fwd", "-o"), ("float_fwd_bwd", "-s"), ("int8_fwd", "-^"),
                           ("naive_fwd", "--o"), ("naive_fwd_bwd", "--s")):
            points = [(r["S"], r[key]) for r in mine if isinstance(r[key], float)]
            if points:
                left.plot(*zip(*points), style, label="%s B=%d" % (key, B))
        for key, style in (("cache_bytes", ":"), ("peak_fwd_bwd", "-s"),
                           ("peak_fwd_bwd_ckpt", "-d"), ("peak_int8_fwd", "-^")):
            points = [(r["S"], r[key] / 1024.0) for r in mine if isinstance(r[key], int)]
            if points:
                right.plot(*zip(*points), style, label="%s B=%d" % (key, B))
    h = results["header"]
    title = "%s, ulab %s" % (h["interpreter"], h["ulab"])
    for axes, label in ((left, "ms a call"), (right, "KB")):
        axes.set_xscale("log", base=2)
        axes.set_yscale("log")
        axes.set_xlabel("S (E=%d, H=%d)" % (E, H))
        axes.set_ylabel(label)
        axes.legend(fontsize=7)
        axes.grid(True, which="both", alpha=0.3)
    left.set_title("time: " + title, fontsize=9)
    right.set_title("heap: " + title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", help="a board's serial port (default: the unix port)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="folder for bench.md, bench.json, bench.png (default %(default)s)")
    parser.add_argument("--quick", action="store_true", help="one tiny shape (for tests)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls at most (%(default)s)")
    parser.add_argument("--cap", type=float,
                        help="skip calls predicted slower than this many seconds (default 1, "
                        "0.2 with the ulab stand-in)")
    parser.add_argument("--peak-cap", type=float,
                        help="search heap peaks for calls under this many seconds (default "
                        "0.5, 0.05 with the ulab stand-in)")
    parser.add_argument("--heap", default="16m", help="unix port heap for the timing run")
    args = parser.parse_args(argv)
    args.port = choose(args.port)

    def log(message):
        print(message, file=sys.stderr, flush=True)

    standin = not args.port and not unixport.has_ulab(unixport.interpreter())
    if args.cap is None:
        args.cap = 0.2 if standin else 1.0
    if args.peak_cap is None:
        args.peak_cap = 0.05 if standin else 0.5
    if args.port:
        results, text = on_board(args.port, args.quick, args.repeats, args.cap, args.peak_cap,
                                 log)
    else:
        results, text = on_unix_port(args.quick, args.repeats, args.cap, args.peak_cap,
                                     args.heap, log)
        print(text, end="")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text(text)
    (args.out / "bench.json").write_text(json.dumps(results, indent=1) + "\n")
    plot(results, args.out / "bench.png")
    log("wrote %s: bench.md, bench.json, bench.png" % args.out)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
