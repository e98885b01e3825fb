"""docs/device-api.md's examples of the Attention layer and the encoder layer run as written
on the unix port (the board's interpreter, the ulab stand-in without a real ulab)."""

import re

import pytest

from tinyattn_host.locations import CHECKOUT
from tinyattn_host.virtual import unixport

PAGE = CHECKOUT / "docs" / "device-api.md"
CHECKS = {  # a block, by a line of it: what it must have made, printed after it runs
    "attn = Attention(embed_dim=8": "print(y.shape, dx.shape, attn.dWq.shape)",
    "layer = TransformerEncoderLayer(16": "print(y.shape, dx.shape)",
}


def block(marker):
    found = [b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
             if marker in b]
    assert len(found) == 1, marker
    return found[0]


@pytest.mark.parametrize("marker, expect", [
    ("attn = Attention(embed_dim=8", "(12, 8) (12, 8) (8, 8)"),
    ("layer = TransformerEncoderLayer(16", "(16, 16) (16, 16)"),
])
def test_the_example_runs_as_written(tmp_path, marker, expect):
    script = tmp_path / "example.py"
    script.write_text(block(marker) + "\n" + CHECKS[marker] + "\n")
    assert unixport.run_file(script, heap="8m").strip().splitlines()[-1] == expect
