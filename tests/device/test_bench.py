"""`make bench` end to end on one tiny shape: tables, JSON and plot are well formed (no timings
are checked: speed is reported, never asserted)."""

import json

from tinyattn_host import bench

PATHS = ("float_fwd", "float_fwd_bwd", "float_fwd_bwd_ckpt", "int8_fwd", "naive_fwd",
         "naive_fwd_bwd")


def _tables(text):
    """{heading: rows of cells} of every markdown table under a ### heading."""
    tables, heading = {}, None
    for line in text.splitlines():
        if line.startswith("### "):
            heading = line[4:]
            tables[heading] = []
        elif line.startswith("|") and heading is not None:
            assert line.endswith("|"), line
            tables[heading].append([c.strip() for c in line.strip("|").split("|")])
    return tables


def test_quick_bench_writes_tables_json_and_plot(tmp_path, capsys):
    assert bench.main(["--quick", "--out", str(tmp_path), "--repeats", "3"]) == 0
    text = (tmp_path / "bench.md").read_text()
    assert text == capsys.readouterr().out
    assert (tmp_path / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results = json.loads((tmp_path / "bench.json").read_text())

    header = results["header"]
    assert header["interpreter"].startswith("micropython ")
    assert header["ulab"] in text.splitlines()[2] or "STAND-IN" in text.splitlines()[2]

    rows = results["attention"]
    assert [(r["B"], r["S"], r["E"], r["H"]) for r in rows] == [(1, 4, 8, 2), (2, 4, 8, 2)]
    for r in rows:
        for path in PATHS:  # the tiny shape is never skipped
            assert isinstance(r[path], float) and r[path] > 0, (path, r[path])
        E, B, S, H = r["E"], r["B"], r["S"], r["H"]
        assert r["params"] == 4 * E * E + 4 * E
        assert r["spec_A"] == B * H * S * S
        assert r["cache_bytes"] - r["cache_bytes_ckpt"] == 4 * B * H * S * S
        assert r["held"] >= r["cache_bytes"] > 0
        for key in ("peak_fwd_bwd", "peak_fwd_bwd_ckpt", "peak_int8_fwd"):
            assert isinstance(r[key], int) and r[key] > 0, (key, r[key])
    assert [(r["heap"].split()[0], r["checkpoint"]) for r in results["largest"]] == [
        ("256", False), ("256", True), ("2048", False), ("2048", True)]
    assert all(0 <= r["S"] <= 8 for r in results["largest"])
    assert [(w.split()[0], b) for w, b, _, _ in results["iris"]] == [
        ("training", 16), ("float", 16), ("int8", 16), ("naive", 16),
        ("float", 1), ("int8", 1), ("naive", 1)]

    tables = _tables(text)
    assert len(tables) == 4
    for heading, table in tables.items():
        assert len({len(row) for row in table}) == 1, heading  # every row as wide as the head
        assert set(table[1]) == {"---"}, heading
    speed = next(t for h, t in tables.items() if h.startswith("Attention time"))
    assert len(speed) == 2 + len(rows)
    assert speed[2][:4] == ["1", "4", "8", "2"]


def test_run_at_the_repl_measures_everything_in_its_own_heap():
    """What a board runs: tinyattn.bench.run() with the peaks and the largest S in its heap."""
    out = bench._device("import tinyattn.bench as b\nb.run(quick=True, repeats=3, cap=0.5, "
                        "peak_cap=0.5, emit_json=True)\n", heap="768k")
    results = bench._json_line(out)
    text = out.split(bench.JSON_MARK)[0]
    assert "### Attention time" in text and "### Iris model" in text
    assert [r["checkpoint"] for r in results["largest"]] == [False, True]
    assert all(r["heap"].startswith("this heap: ") for r in results["largest"])
    for r in results["attention"]:
        for key in ("peak_fwd_bwd", "peak_fwd_bwd_ckpt", "peak_int8_fwd"):
            assert isinstance(r[key], int) and r[key] > 0, (key, r[key])


def test_naive_loops_compute_what_the_float_layer_computes():
    """The naive path is the same math: output and gradients match Attention's (float32)."""
    out = bench._device("""
import json
import tinyattn.bench as b
from ulab import numpy as np
B, S, E, H = 2, 5, 8, 2
layer, lean, x, calls = b._setup(B, S, E, H)
p = {}
for name, param, _ in layer.collect_params():
    p[name] = b._lists(param) if name[0] == "W" else param.tolist()
grad = b._random(B * S, E, 9)
y = layer.forward(x, S)
dx = layer.backward(grad)
ny, cache = b.naive_forward(b._lists(x), p, S, H)
ndx, grads = b.naive_backward(b._lists(grad), p, cache, S, H)
pairs = [(y, ny), (dx, ndx)] + [(getattr(layer, "d" + n), grads["d" + n]) for n in p]
err = 0.0
for a, n in pairs:
    rows = b._lists(a) if len(a.shape) == 2 else [a.tolist()]
    n = n if isinstance(n[0], list) else [n]
    scale = max(1.0, max(abs(v) for r in rows for v in r))
    err = max(err, max(abs(u - v) for r, s in zip(rows, n) for u, v in zip(r, s)) / scale)
print("@@JSON " + json.dumps({"err": err, "pairs": len(pairs)}))
""", heap="4m")
    found = bench._json_line(out)
    assert found["pairs"] == 10
    assert found["err"] < 1e-5, found
