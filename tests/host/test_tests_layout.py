"""The tests' own shape: no import circle among the test modules (each imports the others by
file name: tests/, board/, device/ and emulator/ are on the path), no module over the size a
reader takes in at once (tests/import_graph.py)."""

from collections import Counter
from pathlib import Path

from import_graph import find_cycle, graph, too_long

TESTS = Path(__file__).resolve().parents[1]
FILES = list(TESTS.rglob("*.py"))
STEMS = Counter(p.stem for p in FILES)
MODULES = {p.stem: p for p in FILES if STEMS[p.stem] == 1}  # conftest.py: never imported


def test_the_graph_sees_the_imports():
    imports = graph(MODULES)
    assert "int8_check" in imports["case_digits_int8"]  # from int8_check import ...
    assert "check" in imports["int8_check"]
    assert "emulated_cases" in imports["test_emulator_mac16"]


def test_no_import_circle_among_the_tests():
    ring = find_cycle(graph(MODULES))
    assert ring is None, "import cycle: " + " -> ".join(ring)


def test_no_test_module_is_too_long():
    long = too_long(TESTS)
    assert not long, long
