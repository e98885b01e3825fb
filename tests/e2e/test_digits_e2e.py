"""The digits part of `make run` over the virtual board's pty: a few test rows and the
training steps, each checked against the reference (few rows: the stand-in is slow)."""

import pytest

from check_parts import run_part
from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.checks.digits_check import check_digits
from tinyattn_host.checks.run_report import write_report
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


def test_digits_check_passes(virtual_board, tmp_path):
    check, result, lines = run_part(virtual_board.port, check_digits, batch_size=8, rows=8)
    assert result["rows"] == 8 and result["agree"] == 8 and len(result["train_steps"]) == 3
    assert result["max_rel_err"] <= 1e-4
    assert any(line.startswith("digits train step 2") and line.endswith("ok") for line in lines)
    check.summary.digits = result
    assert "digits: float rel err" in check.summary.line()
    written = write_report(tmp_path, check.summary, check.samples)
    assert {p.name for p in written} >= {"digits_relative_error.png", "digits_errors.png"}


def test_check_model_runs_an_imported_state_dict(virtual_board, tmp_path):
    import numpy as np

    from torch_layout import description, model_state
    from tinyattn_host.checks.model_check import check_model
    from tinyattn_host.interop.statedict import import_npz

    shape = dict(S=4, F_in=3, E=8, F=16, classes=3, layers=1)
    rng = np.random.default_rng(5)
    np.savez(tmp_path / "torch.npz", **model_state(rng=rng, **shape))
    import_npz(tmp_path / "torch.npz", description(H=2, **shape), tmp_path / "m.bin")
    lines = []
    with Board(port=virtual_board.port, out=lambda *a: None) as board:
        ok, worst = check_model(board.start_link(), tmp_path / "m.bin",
                                rng.standard_normal((6, 12)), batch_size=4, out=lines.append)
    assert ok and worst <= 1e-4, "\n".join(lines)
    assert lines[-1].startswith("PASS") and "on 6 rows" in lines[-1]
