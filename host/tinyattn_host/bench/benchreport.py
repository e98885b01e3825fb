"""The bench results (bench.py) as markdown tables, a section of
docs/performance.md per interpreter, and a plot."""

import math
import re
from pathlib import Path

KB = 1024.0
INTRO = """\
# Performance

Written by `make bench` (`.venv/bin/python -m tinyattn_host bench`): one section per
interpreter or board (a build with float64 arrays apart from a float32 one), replaced when
`make bench` runs there again; the sections on the emulated chip (the int8 kernels, their
backends, PIE, and a token of the int8 language model) by `make bench`, the kernels' and the
language model's also by `make emulate`. Do not edit by hand.

How it measures (the device side is the `tinyattn.bench` mip package; the host renders):

- **Time**: the paths of a shape take turns (so a change of machine load hits them alike): a
  warm-up call each, then rounds of one call each (at most the section's `repeats`, at least 3,
  fewer when a round passes the cap), the median of each; every ratio comes from one process.
  `skip`: predicted (from the path's time per multiply-add on the last shape) to take longer
  than the cap; `OOM`: MemoryError. The int8 path is the public one:
  `tinyattn.int8.quantize(model, calibration).forward(x)`.
- **Heap** of a shape: the spec's formulas beside `cache_bytes()` and `held`, the heap a
  forward leaves allocated (`gc.mem_alloc()` after it minus before, on a fresh layer).
- **Smallest heap** (unix port only): the smallest `-X heapsize` with which forward plus
  backward of `Attention(64, 4)` on one sequence completes, found by bisection to 4 KB, a fresh
  interpreter a trial: a guide per S, not a guarantee for a smaller S (see Largest S).
- **Largest S**: `Attention(64, 4)` forward plus backward on one sequence (layer, gradients and
  a ulab input made in the trial). S is scanned upward from 1; the figure is the largest S for
  which it and every smaller S complete (fragmentation makes "fits" non-monotonic, so no
  bisection). On the unix port every S runs in a fresh interpreter started with
  `-X heapsize=...`; on a board, in the heap it has.
- The unix port is a PC: its speeds are not the ESP32-S3's. With the ulab **stand-in**
  (ulab's numpy in plain MicroPython) the float times and heap figures say nothing about ulab.
"""


LABELS = {"float_fwd": "float forward", "float_fwd_bwd": "float forward + backward",
          "float_fwd_bwd_ckpt": "float f + b, checkpoint", "int8_fwd": "int8 forward",
          "cache_bytes": "cache_bytes()", "held": "held after forward",
          "cache_bytes_ckpt": "cache_bytes(), checkpoint", "held_ckpt": "held, checkpoint"}


def _ms(v):
    if not isinstance(v, float):
        return "-" if v is None else str(v)
    return "%.0f" % v if v >= 100 else "%.1f" % v if v >= 10 else "%.2f" % v if v >= 0.1 \
        else "%.3f" % v


def _ratio(a, b):
    if not isinstance(a, float) or not isinstance(b, float) or b <= 0.0:
        return "-"
    return "%.2f" % (a / b)


def _kb(v):
    if not isinstance(v, int):
        return "-" if v is None else str(v)
    return "%.1f" % (v / KB)


def _heap_kb(kb):
    return "over 2 MB" if kb is None else "%d KB" % kb


def table(head, rows):
    """A markdown table, as lines."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return lines + [""]


def _wide(h):
    """", float64" for a build whose arrays are float64 (a board's are float32): its figures
    get a section of their own."""
    return ", float64" if h.get("float") == "float64" else ""


def heading(h):
    """The section's heading: what ran the bench (a float64 build named as such)."""
    ulab = "ulab STAND-IN" if h["ulab"] == "stand-in" else "ulab " + h["ulab"]
    return "## %s on %s, %d-bit, %s%s" % (h["interpreter"], h["machine"], h["word_bits"], ulab,
                                          _wide(h))


def slug(h):
    """A file name part for this interpreter: name, version, word size, ulab (float64)."""
    text = "%s %dbit ulab %s%s" % (h["interpreter"], h["word_bits"], h["ulab"], _wide(h))
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-").lower()


def plot_path(doc, header):
    doc = Path(doc)
    return doc.parent / ("%s-%s.png" % (doc.stem, slug(header)))


def largest_words(r):
    """The largest S in words: a number, or what it means when it is 0 or the limit."""
    if r["S"] == 0:
        return "none: S = 1 does not fit"
    if r["S"] >= r["limit"]:
        return "%d or more (the search stopped there: its limit or time)" % r["S"]
    return str(r["S"])


def speedups(results):
    """(case, float ms, int8 ms) of issue 10's four cases, those that were measured."""
    cases = []
    for r in results["iris"]:
        if r["kind"] == "iris":
            cases.append(("Iris model, batch %d" % r["batch"], r["float_fwd"], r["int8_fwd"]))
    for r in results["attention"]:
        if (r["B"], r["E"], r["H"]) == (1, 64, 4) and r["S"] in (16, 64):
            cases.append(("Attention(64, 4), S = %d" % r["S"], r["float_fwd"], r["int8_fwd"]))
    return cases


def section(results, plot_name):
    """The markdown section of one bench run."""
    h, s = results["header"], results["settings"]
    out = [heading(h), ""]
    out.append("%s; %s (%s), %d-bit words, arrays %s; heap %.0f KB for the timing (%s); "
               "the package as %s; %d rounds at most, cap %.1f s a call; measured %s."
               % ("**ulab STAND-IN: its float and heap figures say nothing about ulab's**"
                  if h["ulab"] == "stand-in" else "ulab " + h["ulab"], h["interpreter"],
                  h["machine"], h["word_bits"], h["float"], h["heap_bytes"] / KB,
                  h.get("timing_heap", "the board's heap"), h.get("package", "?"),
                  s["repeats"], s["cap"], h["date"]))
    out += ["", "### int8 speed-up (float time / int8 time; above 1: int8 is faster)", ""]
    out += table(("case", "float ms", "int8 ms", "float / int8"),
                 [(c, _ms(f), _ms(q), _ratio(f, q)) for c, f, q in speedups(results)])
    out += ["### Chip cost of the int8 kernels (ESP32-S3, estimated from mpy-cross's "
            "xtensawin code; tinyattn_host.chipcost)", "", results["chip_cost"], ""]
    rows = sorted(results["attention"], key=lambda r: (r["B"], r["E"], r["H"], r["S"]))
    out += ["### Attention time (ms a call; f+b = forward plus backward)", ""]
    out += table(("B", "S", "E", "H", "float fwd", "float f+b", "float f+b ckpt", "int8 fwd",
                  "float / int8 fwd"),
                 [(r["B"], r["S"], r["E"], r["H"], _ms(r["float_fwd"]), _ms(r["float_fwd_bwd"]),
                   _ms(r["float_fwd_bwd_ckpt"]), _ms(r["int8_fwd"]),
                   _ratio(r["float_fwd"], r["int8_fwd"])) for r in rows])
    out += ["### Attention heap (KB; ckpt: checkpoint=True)", "",
            "params: (4E^2 + 4E) x 4 bytes; A: the spec's B*H*S^2 attention weights x 4 bytes; "
            "cache_bytes(): what the layer says its caches hold; held: what a forward leaves "
            "allocated.", ""]
    out += table(("B", "S", "E", "H", "params", "A (spec)", "cache_bytes()", "held",
                  "cache_bytes() ckpt", "held ckpt"),
                 [(r["B"], r["S"], r["E"], r["H"], _kb(4 * (4 * r["E"] ** 2 + 4 * r["E"])),
                   _kb(4 * r["B"] * r["H"] * r["S"] ** 2), _kb(r.get("cache_bytes")),
                   _kb(r["held"]), _kb(r.get("cache_bytes_ckpt")), _kb(r["held_ckpt"]))
                  for r in rows])
    if results["largest"]:
        out += ["### Largest S: Attention(64, 4) forward plus backward, one sequence", ""]
        out += table(("heap", "word size", "checkpoint", "largest S (it and every smaller S fit)",
                      "where"),
                     [("%.0f KB" % (r["heap_bytes"] / KB), "%d-bit" % h["word_bits"],
                       "on" if r["checkpoint"] else "off", largest_words(r), r["where"])
                      for r in results["largest"]])
    if results.get("heap_needed"):
        out += ["### Smallest heap: Attention(64, 4) forward plus backward, one sequence", "",
                "The smallest `-X heapsize` (to 4 KB, by bisection, a fresh interpreter a "
                "trial) with which it completes; %d-bit words." % h["word_bits"], ""]
        needed = results["heap_needed"]
        table_rows = []
        for S in sorted({r["S"] for r in needed}):
            kb = dict((r["checkpoint"], r["kb"]) for r in needed if r["S"] == S)
            table_rows.append((S, _heap_kb(kb.get(False)), _heap_kb(kb.get(True))))
        out += table(("S", "checkpoint off", "checkpoint on"), table_rows)
    out += ["### Iris model (Dense 4-32, ReLU, Attention(8, 2) on 4 tokens, pool, Dense 8-3)",
            ""]
    iris = []
    for r in results["iris"]:
        if r["kind"] == "iris_train":
            iris.append(("training epoch (%d rows, Adam)" % r["rows"], r["batch"], _ms(r["ms"]),
                         "-", "-"))
        else:
            iris.append(("forward", r["batch"], _ms(r["float_fwd"]), _ms(r["int8_fwd"]),
                         _ratio(r["float_fwd"], r["int8_fwd"])))
    out += table(("what", "batch", "float ms", "int8 ms", "float / int8"), iris)
    out += stream_table(results.get("stream", []))
    out += decoder_table(results.get("decoder", []))
    out += ["![time and heap against S](%s)" % plot_name, ""]
    return "\n".join(out)


def stream_table(rows):
    """The per-token cost of a stream against a full causal forward of the window (the
    device's bench/stream.py), as lines; none when nothing was streamed."""
    if not rows:
        return []
    r0 = rows[0]
    out = ["### Streaming: one token with a key/value cache against a full causal forward of "
           "the window (ms)", "",
           "Dense %d-%d, positional table of W rows, one causal encoder layer (E %d, %d heads), "
           "Dense: the token at the last position, the window full (W cached keys), against "
           "`forward` of the W tokens; full / token: the speed-up. Cache: `cache_bytes()`, the "
           "keys and values (and keep bytes for int8); held: the heap the stream object holds."
           % (r0["F"], r0["E"], r0["E"], r0["H"]), ""]
    out += table(("W", "float token", "float full", "float full / token", "int8 token",
                  "int8 full", "int8 full / token", "float cache B", "int8 cache B",
                  "float held B", "int8 held B"),
                 [(r["W"], _ms(r["float_token"]), _ms(r["float_full"]),
                   _ratio(r["float_full"], r["float_token"]), _ms(r["int8_token"]),
                   _ms(r["int8_full"]), _ratio(r["int8_full"], r["int8_token"]),
                   r.get("float_cache_bytes", "-"), r.get("int8_cache_bytes", "-"),
                   r.get("float_held", "-"), r.get("int8_held", "-"))
                  for r in sorted(rows, key=lambda r: r["W"])])
    return out


def decoder_table(rows):
    """A language model's cost per token with the cache against a full forward of the
    context (the device's bench/decoder.py), as lines; none when none was measured."""
    if not rows:
        return []
    c = rows[0]["config"]
    block = c[1]
    out = ["### Language model: one token with the key/value cache against a full causal "
           "forward of the context (ms; float, and int8 with its int8 cache)", "",
           "Embedding(%d, %d), %d DecoderBlock(dim %d, %d heads, %d key/value heads, hidden "
           "%d), RMSNorm, Classifier (llama2.c's stories260K shape, seeded weights): the "
           "token at position C with C - 1 cached (`tinyattn.generate`'s step) against "
           "`model.logits` of the C tokens; tokens/s = 1000 / token ms." % (
               c[0][1], c[0][2], len(c) - 3, block[1], block[2], block[3], block[4]), ""]
    out += table(("C", "token ms", "tokens/s", "full ms", "full / token", "int8 token ms",
                  "int8 tokens/s", "float / int8"),
                 [(r["C"], _ms(r["float_token"]), _rate(r["float_token"]),
                   _ms(r["float_full"]), _ratio(r["float_full"], r["float_token"]),
                   _ms(r.get("int8_token")), _rate(r.get("int8_token")),
                   _ratio(r["float_token"], r.get("int8_token")))
                  for r in sorted(rows, key=lambda r: r["C"])])
    return out


def _rate(ms):
    """tokens/s of a token's ms, "-" when it was not measured."""
    return "%.1f" % (1000.0 / ms) if _number(ms) else "-"


def _number(value):
    return isinstance(value, (int, float)) and value > 0


def write(results, doc):
    """Put this run's section (and its plot) into the page `doc`, keeping the other
    interpreters' sections; returns the section."""
    doc = Path(doc)
    png = plot_path(doc, results["header"])
    text = section(results, png.name)
    sections = {}
    if doc.exists():
        for part in re.split(r"(?m)^(?=## )", doc.read_text())[1:]:
            sections[part.splitlines()[0]] = part.rstrip("\n") + "\n"
    sections[heading(results["header"])] = text
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text(INTRO + "\n" + "\n".join(sections.values()))
    plot(results, png)
    return text


def _one_two_five(value, _):
    """A log axis label for 1, 2 and 5 times a power of ten, none for other ticks."""
    if value <= 0:
        return ""
    lead = value / 10.0 ** math.floor(math.log10(value) + 1e-9)
    return "%g" % value if any(abs(lead - d) < 1e-6 for d in (1, 2, 5)) else ""


def plot(results, path):
    """Time and heap against S, one column per batch size, for the (E, H) with the most
    times measured (the largest E of those)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = results["attention"]

    def timed(eh):  # the largest E with half its times measured, else the most measured
        mine = [r[p] for r in rows if (r["E"], r["H"]) == eh for p in LABELS if "_fwd" in p]
        measured = sum(isinstance(v, float) for v in mine)
        half = 2 * measured >= len(mine)
        return half, 0 if half else measured, eh

    E, H = max({(r["E"], r["H"]) for r in rows}, key=timed)
    batches = sorted({r["B"] for r in rows})
    fig, axes = plt.subplots(2, len(batches), figsize=(4.2 * len(batches) + 2.2, 7),
                             squeeze=False, layout="constrained")
    for col, B in enumerate(batches):
        mine = sorted((r for r in rows if (r["B"], r["E"], r["H"]) == (B, E, H)),
                      key=lambda r: r["S"])
        for row, keys, scale in ((0, ("float_fwd", "float_fwd_bwd", "float_fwd_bwd_ckpt",
                                      "int8_fwd"), 1.0),
                                 (1, ("cache_bytes", "held", "cache_bytes_ckpt", "held_ckpt"),
                                  1.0 / KB)):
            ax = axes[row][col]
            for i, key in enumerate(keys):
                points = [(r["S"], r[key] * scale) for r in mine
                          if isinstance(r.get(key), (int, float)) and r[key] > 0]
                if points:
                    ax.plot(*zip(*points), "-" + "os^d"[i], color="C%d" % i, label=LABELS[key])
            ax.set_xscale("log", base=2)
            ax.set_xticks([r["S"] for r in mine], [str(r["S"]) for r in mine])
            ax.minorticks_off()
            ax.set_yscale("log")
            plain = matplotlib.ticker.FuncFormatter(_one_two_five)
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_formatter(plain)
            ax.set_xlabel("S (tokens a sequence)")
            ax.set_ylabel("ms a call" if row == 0 else "KB")
            ax.set_title("%s, B = %d" % ("time" if row == 0 else "heap", B), fontsize=10)
            ax.grid(True, alpha=0.3)
            if not ax.lines:
                ax.text(0.5, 0.5, "nothing measured (skip or OOM)", ha="center",
                        transform=ax.transAxes)
    for row in (0, 1):  # one legend a row, beside its last panel, from all its panels
        handles = {}
        for ax in axes[row]:
            for line in ax.lines:
                handles.setdefault(line.get_label(), line)
        if handles:
            axes[row][-1].legend(handles.values(), handles.keys(), loc="upper left",
                                 bbox_to_anchor=(1.02, 1.0), fontsize=8)
    h = results["header"]
    fig.suptitle("Attention(%d, %d): %s, %d-bit, ulab %s" % (E, H, h["interpreter"],
                                                             h["word_bits"], h["ulab"]),
                 fontsize=11)
    fig.savefig(path, dpi=90)
    plt.close(fig)
