"""One part of `make run` (digits, vowels) run on a board by the e2e tests: the board opened,
the link's HELLO in the summary, the part's check with its result and printed lines."""

from tinyattn_host.board.board import Board
from tinyattn_host.checks.run_check import Check


def run_part(port, part, batch_size, rows):
    """part(check, rows=rows) (check_digits, check_vowels) on the board at `port`: the Check,
    the part's result (asserted ok, its lines shown when not) and the lines it printed."""
    lines = []
    with Board(port=port, out=lambda *a: None) as board:
        check = Check(board, batch_size=batch_size, out=lines.append, progress=False)
        check.summary.device = board.start_link().hello()
        result = part(check, rows=rows)
    assert result["ok"], "\n".join(lines)
    return check, result, lines
