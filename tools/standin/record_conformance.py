"""Record a real ulab's answers to the stand-in's conformance cases.

    MICROPYTHON=/path/to/micropython-with-ulab .venv/bin/python tools/standin/record_conformance.py

Runs tools/standin/conformance/ on that interpreter (a MicroPython unix port built
with ulab 6.12, ULAB_MAX_DIMS=2, float32: the board's ulab) and writes
tests/fixtures/standin_conformance.json, which tests/device/test_standin_conformance.py holds
the stand-in to. Refuses an interpreter without ulab or with double-precision floats.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tinyattn_host.virtual import unixport

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tools" / "standin" / "conformance"
FIXTURE = ROOT / "tests" / "fixtures" / "standin_conformance.json"


def ask(command, code):
    return subprocess.run([command, "-c", code], capture_output=True, text=True,
                          timeout=30).stdout.strip()


def as_lines(fixture):
    """The fixture as JSON with one case a line (a change to a case is a one-line diff)."""
    cases = fixture["cases"]
    return '{"recorded_with": %s,\n "cases": {\n%s\n}}\n' % (
        json.dumps(fixture["recorded_with"], sort_keys=True),
        ",\n".join("  %s: %s" % (json.dumps(k), json.dumps(cases[k], sort_keys=True))
                    for k in sorted(cases)))


def main():
    command = unixport.interpreter()
    if not unixport.has_ulab(command):
        sys.exit("error: %s has no ulab: set MICROPYTHON to a unix port built with ulab" % command)
    if unixport.float_bytes(command) != 4:
        sys.exit("error: %s's ulab stores 8-byte floats: build it with "
                 "MICROPY_FLOAT_IMPL_FLOAT, as a board has it" % command)
    with tempfile.TemporaryDirectory() as folder:
        out = unixport.run_file(CASES / "run.py", args=[folder], extra_path=[CASES],
                                 timeout=120)
    cases = dict(json.loads(line) for line in out.splitlines() if line.startswith("["))
    fixture = {
        "recorded_with": {
            "micropython": ask(command, "import sys; print(sys.implementation.version[:3])"),
            "ulab": ask(command, "import ulab; print(ulab.__version__)"),
            "word_bits": unixport.word_bits(command),
        },
        "cases": cases,
    }
    FIXTURE.write_text(as_lines(fixture))
    print("%d cases from %s (ulab %s) -> %s" % (len(cases), command,
                                                 fixture["recorded_with"]["ulab"],
                                                 FIXTURE.relative_to(ROOT)))


if __name__ == "__main__":
    main()
