"""The vowels part of `make run` over the virtual board's pty: padded batches of utterances of
different lengths with their masks (float and int8 against the reference) and one utterance
streamed frame by frame (few rows: the stand-in is slow)."""

import pytest

from check_parts import run_part
from tinyattn_host.checks.vowels_check import check_vowels
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


def test_vowels_check_passes(virtual_board):
    check, result, _ = run_part(virtual_board.port, check_vowels, batch_size=4, rows=8)
    lengths = {n for b in result["batches"] for n in b["lengths"]}
    assert result["rows"] == 8 and len(lengths) > 1  # batches of different lengths
    assert result["agree"] == 8 and result["int8_exact"] == 8
    assert result["stream"]["frames"] >= 7 and result["stream"]["max_rel_err"] <= 1e-4
    check.summary.vowels = result
    assert "vowels: padded batches" in check.summary.line()
