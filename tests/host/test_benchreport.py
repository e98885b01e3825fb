"""docs/performance.md from bench results: the tables, the speed-up cases, one section per
interpreter, and the plot (no MicroPython needed: the results are written here)."""

from tinyattn_host.bench import benchreport

HEADER = {"interpreter": "micropython 1.28.0", "machine": "testbox", "platform": "linux",
          "ulab": "6.12.0-2D-c", "float": "float32", "word_bits": 32, "heap_bytes": 262144,
          "free_bytes": 250000, "timing_heap": "16m", "package": ".mpy v6.3 for x86",
          "date": "2026-11-30"}


def _attention(B, S, E, H, float_fwd, int8_fwd):
    return {"B": B, "S": S, "E": E, "H": H, "float_fwd": float_fwd, "float_fwd_bwd": "skip",
            "float_fwd_bwd_ckpt": "OOM", "int8_fwd": int8_fwd, "params": 4 * E * E + 4 * E,
            "cache_bytes": 1024, "cache_bytes_ckpt": 512, "held": 2048, "held_ckpt": "skip",
            "runs": {}}


def results(**header):
    return {
        "header": dict(HEADER, **header),
        "settings": {"repeats": 11, "cap": 1.0, "quick": False},
        "attention": [_attention(1, 64, 64, 4, 8.0, 4.0), _attention(1, 16, 64, 4, 2.0, 1.0),
                      _attention(16, 16, 64, 4, 30.0, 10.0)],
        "iris": [{"kind": "iris_train", "rows": 120, "batch": 16, "ms": 30.0},
                 {"kind": "iris", "batch": 16, "float_fwd": 0.5, "int8_fwd": 0.25},
                 {"kind": "iris", "batch": 1, "float_fwd": 0.1, "int8_fwd": "OOM"}],
        "largest": [{"checkpoint": False, "S": 0, "limit": 512, "heap_bytes": 262144,
                     "where": "here"},
                    {"checkpoint": True, "S": 33, "limit": 512, "heap_bytes": 262144,
                     "where": "here"}],
        "heap_needed": [{"S": 4, "checkpoint": False, "kb": 208},
                        {"S": 4, "checkpoint": True, "kb": None}],
        "chip_cost": "| function |\n|---|\n| _matmul |",
        "stream": [_stream(32, 0.5, 4.0, 0.25, "OOM"), _stream(16, 0.4, 2.0, 0.2, 1.0)],
    }


def _stream(W, float_token, float_full, int8_token, int8_full):
    return {"W": W, "E": 24, "H": 4, "F": 12, "float_token": float_token,
            "float_full": float_full, "int8_token": int8_token, "int8_full": int8_full,
            "float_cache_bytes": 192 * W, "int8_cache_bytes": 49 * W, "float_held": 200 * W,
            "int8_held": 300 * W, "runs": {}}


def _table(text, heading):
    """The body rows of the first table after the heading."""
    lines = text[text.index("### " + heading):].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows[2:]


def test_the_speed_up_table_holds_issue_10s_cases_with_their_ratio():
    text = benchreport.section(results(), "plot.png")
    assert _table(text, "int8 speed-up") == [
        ["Iris model, batch 16", "0.50", "0.25", "2.00"],
        ["Iris model, batch 1", "0.10", "OOM", "-"],
        ["Attention(64, 4), S = 64", "8.00", "4.00", "2.00"],
        ["Attention(64, 4), S = 16", "2.00", "1.00", "2.00"]]


def test_rows_are_sorted_and_what_was_not_measured_says_why():
    text = benchreport.section(results(), "plot.png")
    rows = _table(text, "Attention time")
    assert [r[:4] for r in rows] == [["1", "16", "64", "4"], ["1", "64", "64", "4"],
                                     ["16", "16", "64", "4"]]
    assert rows[0][4:] == ["2.00", "skip", "OOM", "1.00", "2.00"]
    heap = _table(text, "Attention heap")
    assert heap[0] == ["1", "16", "64", "4", "65.0", "4.0", "1.0", "2.0", "0.5", "skip"]


def test_the_heap_figures_state_heap_and_word_size_and_say_no_fit_in_words():
    text = benchreport.section(results(), "plot.png")
    assert _table(text, "Largest S") == [
        ["256 KB", "32-bit", "off", "none: S = 1 does not fit", "here"],
        ["256 KB", "32-bit", "on", "33", "here"]]
    assert _table(text, "Smallest heap") == [["4", "208 KB", "over 2 MB"]]
    assert "32-bit words" in text and "2026-11-30" in text
    assert "heap 256 KB for the timing (16m)" in text


def test_the_stream_table_has_a_row_a_window_with_both_speed_ups_and_caches():
    text = benchreport.section(results(), "plot.png")
    assert _table(text, "Streaming") == [
        ["16", "0.40", "2.00", "5.00", "0.20", "1.00", "5.00", "3072", "784", "3200", "4800"],
        ["32", "0.50", "4.00", "8.00", "0.25", "OOM", "-", "6144", "1568", "6400", "9600"]]
    assert "Dense 12-24" in text and "E 24, 4 heads" in text


def test_a_float64_build_gets_a_section_and_a_plot_of_its_own(tmp_path):
    doc = tmp_path / "performance.md"
    benchreport.write(results(), doc)
    benchreport.write(results(float="float64", date="2026-12-02"), doc)
    text = doc.read_text()
    assert text.count("\n## ") == 2 and "2026-11-30" in text and "2026-12-02" in text
    wide = benchreport.heading(dict(HEADER, float="float64"))
    assert wide == benchreport.heading(HEADER) + ", float64" and wide in text
    assert benchreport.plot_path(doc, dict(HEADER, float="float64")).name.endswith(
        "float64.png")


def test_results_without_a_stream_leave_its_table_out():
    plain = results()
    del plain["stream"]
    assert "### Streaming" not in benchreport.section(plain, "plot.png")


def test_each_interpreter_keeps_its_own_section(tmp_path):
    doc = tmp_path / "performance.md"
    benchreport.write(results(word_bits=64), doc)
    benchreport.write(results(), doc)
    benchreport.write(results(date="2026-12-01"), doc)  # the 32-bit section again: replaced
    text = doc.read_text()
    assert text.startswith(benchreport.INTRO)
    assert text.count("\n## ") == 2
    assert "2026-12-01" in text and text.count("2026-11-30") == 1  # the 64-bit section's
    for bits in (32, 64):
        png = benchreport.plot_path(doc, results(word_bits=bits)["header"])
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.name in text
