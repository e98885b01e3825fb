"""The instruction table of `make emulate` / `make bench`: every kernel measured, the 8-way
loop's executed instructions against chipcost's static count of the same loop, the section
put into a page (in place of its old self) without losing the page's other sections."""

from tinyattn_host.emulator import counts
from tinyattn_host.emulator.kernel_runs import representative_runs


def test_every_kernel_is_measured_and_the_loop_agrees_with_the_static_count(emulator):
    attention, others = representative_runs(emulator)
    assert [r.kernel for r in attention] == ["linear"] * 3 + ["_attend", "linear"]
    assert {r.kernel for r in others} == {"linear", "_pool", "table_lookup", "norm", "add"}
    assert all(r.instructions > r.units for r in attention + others)
    loop = others[0]
    static, _ = counts.static_estimates()["linear"]  # instructions per MAC of the loop body
    per_iteration = loop.instructions / (loop.units / 8)
    assert per_iteration == int(per_iteration)  # whole iterations: the count is exact
    # the body's instructions, less at most its one skipped `movi 0` of the compare idiom
    assert 8 * static - 1 <= per_iteration <= 8 * static
    for r in attention:  # a whole call costs more a MAC than its inner loop
        assert r.per_unit > static


def test_the_section_replaces_its_old_self_and_keeps_the_rest(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\nintro\n\n## micropython x\n\nrows\n\n"
                   + counts.HEADING + "\n\nold table\n")
    counts.write_section(doc, counts.HEADING + "\n\nnew table\n")
    text = doc.read_text()
    assert "old table" not in text and text.count(counts.HEADING) == 1
    assert text.startswith("# Performance\n\nintro\n\n## micropython x\n\nrows\n")
    assert text.endswith(counts.HEADING + "\n\nnew table\n")


def test_a_section_between_others_is_replaced_where_it_stands(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text("# Performance\n\n" + counts.HEADING + "\n\nold table\n\n"
                   "## next\n\nrows\n")
    counts.write_section(doc, counts.HEADING + "\n\nnew table\n")
    assert doc.read_text() == ("# Performance\n\n" + counts.HEADING + "\n\nnew table\n\n"
                               "## next\n\nrows\n")


def test_make_bench_gets_one_line_when_qemu_is_missing(tmp_path, monkeypatch):
    from tinyattn_host.emulator import qemu

    monkeypatch.setattr(qemu, "QEMU", "/nonexistent/qemu")
    doc = tmp_path / "performance.md"
    line = counts.bench_section(doc)
    assert line == "emulator: not run: no /nonexistent/qemu: " + qemu.INSTALL_HINT
    assert not doc.exists()  # nothing written


def test_the_section_has_every_kernel_and_says_what_it_cannot_tell(emulator):
    text = counts.section(emulator)
    assert text.startswith(counts.HEADING + "\n")
    for kernel in ("linear", "_attend", "_pool", "table_lookup", "norm", "add"):
        assert "\n| %s | " % kernel in text
    assert "estimated (chipcost)" in text and counts.CANNOT_TELL in text
