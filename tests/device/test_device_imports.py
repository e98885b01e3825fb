"""The device package's shape (issue 19): its imports have no cycle (every import of
device/tinyattn, at module level or inside a function, read with ast; a cycle is named module
by module), and no module is over the size a reader takes in at once but those that must stay
whole (tests/import_graph.py)."""

from import_graph import find_cycle, graph, package_modules, too_long
from tinyattn_host.virtual.unixport import DEVICE_DIR

PACKAGE = DEVICE_DIR / "tinyattn"
GRAPH = graph(package_modules(DEVICE_DIR, "tinyattn"))
WHOLE = {  # over MAX_LINES, and why (the module's docstring says it too)
    "int8/asm_attend.py": "one asm_xtensa function, most lines one instruction: an asm "
                          "function cannot call another without a call frame",
    "int8/asm_pie_attend.py": "the PIE attention core, one asm_xtensa function for the same "
                              "reason",
}


def test_the_graph_sees_the_imports():
    assert "tinyattn.nn.attention" in GRAPH["tinyattn.nn.layers"]
    assert "tinyattn.int8.kernels" in GRAPH["tinyattn.int8.layers"]  # from . import kernels
    assert "tinyattn.store" in GRAPH["tinyattn.int8.model_save"]  # from .. import store
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    ring = find_cycle(GRAPH)
    assert ring is None, "import cycle: " + " -> ".join(ring)


def test_no_device_module_is_too_long():
    long = too_long(PACKAGE, WHOLE)
    assert not long, long
    assert too_long(PACKAGE).keys() == WHOLE.keys()  # each exception is still one
