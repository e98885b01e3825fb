"""The host package's shape: no import circle (imports inside functions count too), no
module over the size a reader takes in at once (tests/import_graph.py)."""

from pathlib import Path

import tinyattn_host
from import_graph import find_cycle, graph, package_modules, too_long

PACKAGE = Path(tinyattn_host.__file__).parent
MODULES = package_modules(PACKAGE.parent, "tinyattn_host")


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_in_the_host_package():
    imports = graph(MODULES)
    assert imports["tinyattn_host.board.board"] >= {"tinyattn_host.board.deploy"}
    assert find_cycle(imports) is None, " -> ".join(find_cycle(imports))


def test_no_host_module_is_too_long():
    long = too_long(PACKAGE)
    assert not long, long
