"""The progress line of `make run`: on a terminal only, and never inside the table's rows."""

import io

from tinyattn_host.checks.run_check import BatchResult, Check
from tinyattn_host.checks.progress import Progress


class Terminal(io.StringIO):
    """What a terminal shows: carriage return and erase-to-end-of-line applied."""

    def __init__(self, tty=True):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty

    def screen(self):
        lines = []
        for raw in self.getvalue().split("\n"):
            line = ""
            for i, part in enumerate(raw.split("\r")):
                part = part.replace("\x1b[K", "\0")
                if i and part.startswith("\0"):  # "\r\x1b[K": back to the start, erase
                    line, part = "", part[1:]
                elif i:
                    line, part = part + line[len(part):], ""
                line += part
            lines.append(line.replace("\0", ""))
        return lines


def row(index):
    return BatchResult(model="random", batch=index, rows=16, float_max_err=1e-6, float_agree=16,
                       int8_exact=16, int8_agree_float=16, us_float=100, us_int8=50,
                       tolerance=1e-4)


def test_rows_never_start_with_the_progress_bar_and_nothing_is_left_behind():
    terminal = Terminal()
    check = Check(None, out=lambda line: terminal.write(line + "\n"),
                  progress=Progress(terminal))
    for index in range(3):
        check._show(row(index), index, 3)
    check.out("train step: ...")
    screen = terminal.screen()
    assert [line.split()[0] for line in screen[:3]] == ["random"] * 3
    assert screen[3:] == ["train step: ...", ""]
    assert "[####" in terminal.getvalue()  # it was shown in between


def test_no_progress_when_not_a_terminal():
    terminal = Terminal(tty=False)
    check = Check(None, out=lambda line: terminal.write(line + "\n"),
                  progress=Progress(terminal))
    for index in range(3):
        check._show(row(index), index, 3)
    assert "[" not in terminal.getvalue() and "\r" not in terminal.getvalue()
