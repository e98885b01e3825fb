"""check-model's verdict when the board agrees with the reference and only --expect differs
(issue 38): it says so and names the usual cause, PyTorch's training mode (dropout)."""

from tinyattn_host.checks.model_check import _summary


def verdict(reference, expect):
    lines = []
    ok, _ = _summary("model.bin", 40, {"reference": reference, "expect": expect}, True,
                     lines.append)
    assert len(lines) == 1
    return ok, lines[0]


def test_only_expect_differs_names_training_mode_and_model_eval():
    ok, line = verdict(2e-7, 1.8e-1)  # issue 38's figure: dropout 0.1 left on
    assert not ok and line.startswith("FAIL: model.bin on 40 rows")
    assert "the reference agrees with the board: only the expected outputs differ" in line
    assert "training mode" in line and "dropout" in line and "model.eval()" in line


def test_a_board_that_disagrees_with_the_reference_does_not_blame_training_mode():
    ok, line = verdict(1.8e-1, 1.8e-1)
    assert not ok and "the board disagrees with the reference" in line
    assert "model.eval()" not in line


def test_all_agree_is_a_pass():
    ok, line = verdict(2e-7, 3e-7)
    assert ok and line.startswith("PASS") and "model.eval()" not in line
