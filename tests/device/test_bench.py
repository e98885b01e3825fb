"""`make bench` end to end on a tiny grid, `tinyattn.bench.run()` as a board runs it, and the
largest-S search (no timings are checked: speed is reported, never asserted)."""

import json
import re

import pytest

from tinyattn_host.__main__ import main as tinyattn_host_main
from tinyattn_host.bench import bench, benchreport
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport import DEVICE_DIR

PLAN = bench.PLAN
OTHER = "## micropython 0.0.0 on elsewhere, 32-bit, ulab 1.0\n\nkept as it was\n"


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


def _records(out):
    return [json.loads(line[len(PLAN.MARK):]) for line in out.splitlines()
            if line.startswith(PLAN.MARK)]


def test_quick_bench_writes_its_section_json_and_plot(tmp_path, capsys):
    doc = tmp_path / "performance.md"
    doc.write_text(benchreport.INTRO + "\n" + OTHER)
    assert tinyattn_host_main(["bench", "--quick", "--out", str(tmp_path), "--doc", str(doc),
                               "--repeats", "3"]) == 0
    results = json.loads((tmp_path / "bench.json").read_text())
    header = results["header"]
    assert header["interpreter"].startswith("micropython ")
    assert header["word_bits"] in (32, 64)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", header["date"])
    assert header["package"].startswith(".mpy") or header["package"].startswith(".py")

    text = doc.read_text()
    assert text.startswith(benchreport.INTRO)
    assert OTHER in text  # another interpreter's section stays
    mine = text[text.index(benchreport.heading(header)):]
    assert mine.rstrip() == capsys.readouterr().out.rstrip()
    assert "%d-bit words" % header["word_bits"] in mine and header["date"] in mine
    png = benchreport.plot_path(doc, header)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.name in mine

    rows = results["attention"]
    assert [(r["B"], r["S"], r["E"], r["H"]) for r in rows] == PLAN.shapes(quick=True)
    for r in rows:
        for path in PLAN.PATHS:  # the tiny shape is never skipped
            assert isinstance(r[path], float) and r[path] > 0, (path, r[path])
        B, S, E, H = r["B"], r["S"], r["E"], r["H"]
        assert r["params"] == 4 * E * E + 4 * E
        assert r["cache_bytes"] - r["cache_bytes_ckpt"] == 4 * B * H * S * S
        assert r["held"] >= r["cache_bytes_ckpt"] > 0
    assert [(r["checkpoint"], r["heap_bytes"], r["limit"]) for r in results["largest"]] == [
        (False, 256 * 1024, PLAN.QUICK_LIMIT), (True, 256 * 1024, PLAN.QUICK_LIMIT)]
    assert [(r["kind"], r["batch"]) for r in results["iris"]] == [
        ("iris_train", 16), ("iris", 16), ("iris", 1)]

    needed = results["heap_needed"]
    assert [(r["S"], r["checkpoint"]) for r in needed] == [(4, False), (4, True)]
    assert all(r["kb"] is None or 32 < r["kb"] <= 2048 for r in needed)

    streamed = results["stream"]
    assert [r["W"] for r in streamed] == list(PLAN.QUICK_STREAM_W)
    for r in streamed:
        for path in ("float_token", "float_full", "int8_token", "int8_full"):
            assert isinstance(r[path], float) and r[path] > 0, (path, r[path])
        W, E = r["W"], PLAN.STREAM_E
        assert r["int8_cache_bytes"] == 2 * W * E + W  # int8 K and V rows, keep bytes
        assert r["float_cache_bytes"] in (2 * W * E * 4, 2 * W * E * 8)  # float32 or float64
        assert r["float_held"] >= r["float_cache_bytes"] and r["int8_held"] >= r["int8_cache_bytes"]

    decoded = results["decoder"]
    assert [r["C"] for r in decoded] == list(PLAN.QUICK_DECODER_C)
    for r in decoded:
        for path in ("float_token", "float_full", "int8_token"):
            assert isinstance(r[path], float) and r[path] > 0, (path, r[path])

    tables = _tables(mine)
    assert len(tables) == 9
    for heading, table in tables.items():
        assert len({len(row) for row in table}) == 1, heading  # every row as wide as the head
        assert all(re.fullmatch(r":?-{3,}:?", cell) for cell in table[1]), heading
    speedup = next(t for h, t in tables.items() if h.startswith("int8 speed-up"))
    assert [row[0] for row in speedup[2:]] == ["Iris model, batch 16", "Iris model, batch 1"]
    chip = next(t for h, t in tables.items() if h.startswith("Chip cost"))
    assert any(row[0] == "linear" for row in chip[2:]), chip  # the int8 kernels' loops
    lm_rows = next(t for h, t in tables.items() if h.startswith("Language model"))
    assert [row[0] for row in lm_rows[2:]] == [str(C) for C in PLAN.QUICK_DECODER_C]
    stream_rows = next(t for h, t in tables.items() if h.startswith("Streaming"))
    assert [row[0] for row in stream_rows[2:]] == [str(W) for W in PLAN.QUICK_STREAM_W]
    smallest = next(t for h, t in tables.items() if h.startswith("Smallest heap"))
    assert [row[0] for row in smallest[2:]] == ["4"]
    assert all(re.fullmatch(r"\d+ KB|over 2 MB", cell) for cell in smallest[2][1:])
    largest = next(t for h, t in tables.items() if h.startswith("Largest S"))
    assert [row[:3] for row in largest[2:]] == [
        ["256 KB", "%d-bit" % header["word_bits"], "off"],
        ["256 KB", "%d-bit" % header["word_bits"], "on"]]


def test_run_at_the_repl_prints_one_record_a_line_as_it_measures(tmp_path):
    """What a board runs: tinyattn.bench.run(), the largest S searched in its own heap."""
    script = tmp_path / "bench_repl_case.py"
    script.write_text("import tinyattn.bench as b\nb.run(quick=True, repeats=3, cap=0.5)\n")
    out = unixport.run_file(script, heap="1m")
    lines = [line for line in out.splitlines() if line.strip()]
    assert all(line.startswith(PLAN.MARK) for line in lines), lines[:3]
    records = _records(out)
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "header" and kinds[-1] == "done"
    assert kinds.count("attention") == len(PLAN.shapes(quick=True))
    assert [r["W"] for r in records if r["kind"] == "stream"] == list(PLAN.QUICK_STREAM_W)
    largest = [r for r in records if r["kind"] == "largest"]
    assert [r["checkpoint"] for r in largest] == [False, True]
    assert all(r["where"] == "this heap" and r["heap_bytes"] > 900 * 1024 for r in largest)
    for r in largest:  # every S from 1 up was tried, in order, and fit (1 MB is plenty)
        trials = [t for t in records if t["kind"] == "trial" and t["checkpoint"] == r["checkpoint"]]
        assert [t["S"] for t in trials] == list(range(1, PLAN.QUICK_LIMIT + 1))
        assert all(t["fits"] for t in trials) and r["S"] == PLAN.QUICK_LIMIT


def test_largest_seq_len_scans_upward_and_stops_at_the_first_failure():
    tried = []

    def fits(S):  # fails at 5, would fit again at 6 (fragmentation): 4 is the answer
        tried.append(S)
        return S != 5

    assert PLAN.largest_seq_len(fits, 100) == 4
    assert tried == [1, 2, 3, 4, 5]
    assert PLAN.largest_seq_len(lambda S: False, 100) == 0
    assert PLAN.largest_seq_len(lambda S: True, 7) == 7


def test_fits_in_a_fresh_interpreter_says_no_when_the_heap_is_too_small():
    assert bench.fits(2, checkpoint=False, heap="1m", device_dir=DEVICE_DIR)
    assert not bench.fits(256, checkpoint=False, heap="96k", device_dir=DEVICE_DIR)


def test_a_largest_s_of_zero_or_at_the_limit_is_said_in_words():
    assert benchreport.largest_words({"S": 0, "limit": 512}) == "none: S = 1 does not fit"
    assert benchreport.largest_words({"S": 512, "limit": 512}).startswith("512 or more")
    assert benchreport.largest_words({"S": 33, "limit": 512}) == "33"


@pytest.mark.parametrize("heap, expected", [("256k", 262144), ("2m", 2097152), ("4096", 4096)])
def test_heap_sizes_read_as_micropython_reads_them(heap, expected):
    assert bench.unixport_heap_bytes(heap) == expected


def test_smallest_heap_is_found_to_the_step(monkeypatch):
    def fits(S, checkpoint, heap, device_dir):  # completes from 101 KB up
        return int(heap[:-1]) >= 101

    monkeypatch.setattr(bench, "fits", fits)
    assert bench.smallest_heap(8, False, None) == 104  # 100 fails, 104 completes
    assert bench.smallest_heap(8, False, None, high=64) is None


def test_bench_on_a_board_deploys_the_bench_and_measures_in_its_heap(virtual_board, tmp_path):
    """`make bench PORT=...` on the virtual board: the bench package is deployed with the
    core, its records stream over the link (RUN), the largest S is searched in the board's heap."""
    doc = tmp_path / "performance.md"
    assert tinyattn_host_main(["bench", "--port", virtual_board.port, "--quick",
                               "--out", str(tmp_path), "--doc", str(doc), "--repeats", "3"]) == 0
    lib = virtual_board.flash_dir / "lib" / "tinyattn"
    assert {"__init__.mpy", "fit.mpy", "plan.mpy"} <= {p.name for p in (lib / "bench").iterdir()}
    results = json.loads((tmp_path / "bench.json").read_text())
    assert [(r["B"], r["S"], r["E"], r["H"]) for r in results["attention"]] == PLAN.shapes(True)
    assert [(r["checkpoint"], r["where"]) for r in results["largest"]] == [
        (False, "this heap"), (True, "this heap")]
    assert results["heap_needed"] == []
    assert "this heap" in doc.read_text()
