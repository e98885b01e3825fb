"""The lines a page tells a user to paste: a shell block's commands, a python block's `>>>`
lines, the commands quoted in a sentence (each found after a text of the page)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _after(page, after):
    text = (ROOT / page).read_text()
    return text[text.index(after):]


def repl_lines(page, after):
    """The `>>>` lines of the first python block after the text `after` in `page`."""
    block = re.search(r"```python\n(.*?)```", _after(page, after), re.S).group(1)
    return [re.sub(r"\s+#.*$", "", line[4:]) for line in block.splitlines()
            if line.startswith(">>> ")]


def shell_lines(page, after):
    """The commands of the first sh block after `after` (comment lines and trailing
    comments left out)."""
    block = re.search(r"```sh\n(.*?)```", _after(page, after), re.S).group(1)
    return [re.sub(r"\s+#.*$", "", line) for line in block.splitlines()
            if line.strip() and not line.startswith("#")]


def quoted_commands(page, after, until):
    """The `...` spans that start with .venv/bin/ between `after` and the text `until`."""
    text = _after(page, after)
    text = text[:text.index(until)]
    return [" ".join(span.split()) for span in re.findall(r"`(\.venv/bin/[^`]*)`", text)]
