"""`make bench`: speed and memory measured on the device, rendered here as a page (--doc).

    .venv/bin/python -m tinyattn_host bench [--port P] [--out build/bench] [--quick]
                      [--doc build/bench/performance.md] [--repeats N] [--cap S] [--heap 256k]

The device side is the tinyattn-bench mip package (the folder tinyattn/bench/: __init__.py, fit.py,
plan.py, stream.py, timing.py): `tinyattn.bench.run()` emits each result as it measures (a JSON
line at a REPL; through the link, a RECORD frame of RUN). With a port, it runs on the board
through the link (deployed first when needed), in the heap the link leaves. Without one, on
the MicroPython unix port ($MICROPYTHON, else the one installed here; the ulab stand-in when it
has no ulab): the times on the virtual board through the link, as on a board; the largest S by
a fresh interpreter for every S tried, started with `-X heapsize=<--heap>`, with the package
compiled to .mpy as `make deploy` ships it; the smallest heap for a few S, by bisection over -X
heapsize. Writes bench.json to --out and the tables and plot to --doc
(build/bench/performance.md; `make docs-figures` writes docs/performance.md).
"""

import json
import subprocess
import tempfile
import time
from pathlib import Path

from . import benchreport
from .. import protocol
from ..errors import DeviceError
from ..virtual import unixport
from ..board.deploy import SOURCE_DIR, MpyFormat, package_files
from ..board.ports import choose
from ..checks.progress import Progress
from ..device_modules import device_module

DEFAULT_OUT = Path("build") / "bench"
DEFAULT_DOC = DEFAULT_OUT / "performance.md"  # docs/performance.md: make docs-figures
TIMING_HEAP = "16m"
SILENCE = 600  # seconds the board may print nothing (one measurement) before it is given up


PLAN = device_module("bench/plan")  # the definitions the device uses too


def _seconds(value):
    return "%d s" % value if value < 90 else "%d min %02d s" % divmod(int(value), 60)


class Collector:
    """Gathers the device's records into results, reporting progress as they come."""

    def __init__(self, quick, repeats, cap, progress):
        self.shapes = PLAN.shapes(quick)
        self.repeats, self.cap, self.progress = repeats, cap, progress
        self.results = {"attention": [], "iris": [], "largest": [], "heap_needed": [],
                        "stream": [], "decoder": [],
                        "settings": {"repeats": repeats, "cap": cap, "quick": quick}}
        self.last = time.monotonic()
        self.rate = None  # seconds per multiply-add of the last shape, with its overheads

    def left(self, done):
        """Estimated seconds for the shapes after the first `done`: the last shape's time per
        multiply-add, at most what tinyattn.bench.medians allows a shape (a budget of `cap`
        a path for the rounds, plus the warm-up calls, each under `cap`)."""
        bound = 2 * len(PLAN.PATHS) * self.cap
        return sum(min(bound, self.rate * PLAN.macs(B, S, E))
                   for B, S, E, _ in self.shapes[done:])

    def __call__(self, record):
        kind = record.pop("kind")
        now, took = time.monotonic(), time.monotonic() - self.last
        self.last = now
        if kind == "header":
            self.results["header"] = record
            self.show_attention(0)
        elif kind == "trial":
            self.progress.note("largest S, checkpoint %s: S = %d %s"
                               % ("on" if record["checkpoint"] else "off", record["S"],
                                  "fits" if record["fits"] else "does not fit"))
        elif kind == "largest":
            self.results["largest"].append(record)
            self.progress.log("largest S, checkpoint %s, %.0f KB heap: %s"
                              % ("on" if record["checkpoint"] else "off",
                                 record["heap_bytes"] / 1024.0,
                                 benchreport.largest_words(record)))
        elif kind == "attention":
            rows = self.results["attention"]
            rows.append(record)
            self.rate = took / PLAN.macs(record["B"], record["S"], record["E"])
            self.show_attention(len(rows))
        elif kind == "heap_needed":
            self.results["heap_needed"].append(record)
            self.progress.note("smallest heap for S = %d, checkpoint %s: %s KB"
                               % (record["S"], "on" if record["checkpoint"] else "off",
                                  record["kb"]))
        elif kind == "stream":
            self.results["stream"].append(record)
            self.progress.note("stream: W = %d measured" % record["W"])
        elif kind == "decoder":
            self.results["decoder"].append(record)
            self.progress.note("decoder: context %d measured" % record["C"])
        elif kind in ("iris", "iris_train"):
            self.results["iris"].append(dict(record, kind=kind))
            self.progress.note("Iris model: %s measured" % (
                "training epoch" if kind == "iris_train" else "forward, batch %d"
                % record["batch"]))

    def show_attention(self, done):
        """What is measured now and the time left for the attention shapes."""
        if done == len(self.shapes):
            self.progress.note("attention shapes: all %d measured; now the Iris model" % done)
            return
        left = "" if self.rate is None else "; about %s left for them" % _seconds(
            self.left(done))
        self.progress.note("attention shapes: %d of %d measured, now B=%d S=%d E=%d H=%d%s"
                           % ((done, len(self.shapes)) + self.shapes[done] + (left,)))


# ---- the unix port ---------------------------------------------------------------------------
def _interpreter_format(command):
    done = subprocess.run([command, "-c", "import sys\nprint(getattr(sys.implementation, "
                           "'_mpy', 0))"], capture_output=True, text=True, timeout=60,
                          check=True)
    return MpyFormat.from_sys(int(done.stdout))


def compiled_package(command, folder):
    """Write device/tinyattn to folder/tinyattn as `make deploy` would ship it to `command`
    (.mpy for its architecture, else .py); returns how."""
    files, how = package_files(_interpreter_format(command))
    for relative, data in files.items():
        target = Path(folder) / "tinyattn" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return how


def fits(S, checkpoint, heap, device_dir):
    """bench.fit.fits(S) in a fresh interpreter started with -X heapsize=heap."""
    code = "from tinyattn.bench.fit import fits\nprint(fits(%d, %d, %d, %r))" % (
        S, PLAN.LARGEST_E, PLAN.LARGEST_H, checkpoint)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "fits.py"
        script.write_text(code)
        try:
            out = unixport.run_file(script, heap=heap, device_dir=device_dir)
        except unixport.MicroPythonError as err:
            if err.kind == "MemoryError":  # already while importing
                return False
            raise
    return out.strip() == "True"


def largest_fresh(collector, heap, limit, device_dir):
    """The largest-S records, each S tried in a fresh interpreter."""
    for checkpoint in (False, True):
        def trial(S):
            done = fits(S, checkpoint, heap, device_dir)
            collector({"kind": "trial", "S": S, "checkpoint": checkpoint, "fits": done})
            return done

        S = PLAN.largest_seq_len(trial, limit)
        collector({"kind": "largest", "checkpoint": checkpoint, "limit": limit, "S": S,
                   "heap_bytes": unixport_heap_bytes(heap), "E": PLAN.LARGEST_E,
                   "H": PLAN.LARGEST_H,
                   "where": "-X heapsize=%s, a fresh interpreter for every S" % heap})


def smallest_heap(S, checkpoint, device_dir, low=32, high=2048, step=4):
    """The smallest -X heapsize in KB (to `step`) with which bench.fit.fits(S) completes in a
    fresh interpreter, by bisection between low and high (None: not even in high). A heap
    found to complete while one `step` KB smaller fails; fragmentation can let a still
    smaller heap complete, which is why the largest S is scanned instead."""
    if not fits(S, checkpoint, "%dk" % high, device_dir):
        return None
    while high - low > step:
        middle = (low + high) // 2 // step * step
        if fits(S, checkpoint, "%dk" % middle, device_dir):
            high = middle
        else:
            low = middle
    return high


def heaps_needed(collector, quick, device_dir):
    """Records of the smallest heap for Attention(64, 4) forward plus backward at a few S."""
    for S in PLAN.HEAP_S[:1] if quick else PLAN.HEAP_S:
        for checkpoint in (False, True):
            kb = smallest_heap(S, checkpoint, device_dir)
            collector({"kind": "heap_needed", "S": S, "checkpoint": checkpoint, "kb": kb,
                       "E": PLAN.LARGEST_E, "H": PLAN.LARGEST_H})


def unixport_heap_bytes(heap):
    """Bytes of a -X heapsize value such as 256k or 2m."""
    scale = {"k": 1024, "m": 1024 * 1024}.get(heap[-1:].lower(), 1)
    return int(heap.rstrip("kKmM")) * scale


def on_virtual_board(collector, quick, heap):
    """Measure on the unix port into collector.results: the timings on the virtual board
    through the link (RUN, as on a board); the largest S and the smallest heaps in fresh
    interpreters, one a trial with its own -X heapsize (a heap measured, not a board)."""
    from ..board.board import Board

    command = unixport.interpreter()
    with tempfile.TemporaryDirectory() as tmp:
        how = compiled_package(command, tmp)
        collector.progress.log("measuring on %s (ulab: %s), the package as %s"
                               % (command, "real" if unixport.has_ulab(command) else
                                  "STAND-IN", how))
        with Board(port=None, heap=TIMING_HEAP, out=lambda *_: None) as board:
            board.start_link().run("bench", "run", collector, {
                "quick": quick, "repeats": collector.repeats, "cap": collector.cap,
                "search_largest": False}, timeout=SILENCE)
            board.stop_link()
        collector.results["header"]["timing_heap"] = TIMING_HEAP
        collector.results["header"]["package"] = how
        largest_fresh(collector, heap, PLAN.QUICK_LIMIT if quick else PLAN.LARGEST_LIMIT, tmp)
        heaps_needed(collector, quick, tmp)


def on_board(collector, port, quick):
    """tinyattn.bench.run() on the board at `port` into collector.results, through the link
    (RUN, its records as they come; deployed first: a deploy copies only the files that
    differ, and puts the bench there too)."""
    from ..board.board import Board

    with Board(port=port, deploy="always", out=collector.progress.log) as board:
        collector.progress.log("running tinyattn.bench.run() on %s" % port)
        try:
            board.start_link().run("bench", "run", collector, {
                "quick": quick, "repeats": collector.repeats, "cap": collector.cap},
                timeout=SILENCE)
        except protocol.ErrorReply as err:
            raise DeviceError("tinyattn.bench.run() failed on the board: %s" % err.message)
        board.stop_link()
    collector.results["header"]["package"] = "as deployed on the board"


KERNEL_SOURCES = ("int8/kernels.py", "int8/kernels_attend.py")  # linear; the attention core


def chip_cost():
    """The int8 kernels' inner loops on the ESP32-S3, estimated from the xtensawin code
    mpy-cross emits for int8/kernels.py and int8/kernels_attend.py (tinyattn_host.chipcost), as a
    markdown table."""
    from ..chipcost import chipcost

    loops = [loop for name in KERNEL_SOURCES for loop in chipcost.kernel_loops(SOURCE_DIR / name)]
    return chipcost.markdown_table(loops)


def bench_command(args):
    """The bench command (`make bench`): measure, write bench.json, the tables and the plot."""
    args.port = choose(args.port)
    args.out, args.doc = Path(args.out), Path(args.doc)
    standin = not args.port and not unixport.has_ulab(unixport.interpreter())
    if args.cap is None:
        args.cap = 0.2 if standin else 1.0
    chip = chip_cost()  # first: a missing disassembler stops it before the minutes measuring
    progress = Progress()
    collector = Collector(args.quick, args.repeats, args.cap, progress)
    start = time.monotonic()
    try:
        if args.port:
            on_board(collector, args.port, args.quick)
        else:
            on_virtual_board(collector, args.quick, args.heap)
    finally:
        progress.clear()
    results = collector.results
    results["header"]["date"] = time.strftime("%Y-%m-%d", time.gmtime())
    results["chip_cost"] = chip
    progress.log("measured in %s" % _seconds(time.monotonic() - start))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.json").write_text(json.dumps(results, indent=1) + "\n")
    section = benchreport.write(results, args.doc)
    print(section)
    if not args.quick:  # the kernels' machine code in qemu-system-xtensa (its own section)
        from ..emulator.counts import bench_section

        print(bench_section(args.doc))
        from ..emulator.backend_counts import bench_section as backends_section

        print(backends_section(args.doc))
        from ..emulator.pie_counts import bench_section as pie_section

        print(pie_section(args.doc))
        from ..emulator.lm_counts import bench_section as lm_section

        print(lm_section(args.doc))
    progress.log("wrote %s, %s and %s" % (args.out / "bench.json", args.doc,
                                          benchreport.plot_path(args.doc, results["header"])))
    return 0

