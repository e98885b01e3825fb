"""The device package's imports have no cycle (issue 19): every import of device/tinyattn,
at module level or inside a function, read with ast; a cycle is named module by module."""

import ast

from tinyattn_host.virtual.unixport import DEVICE_DIR

PACKAGE = DEVICE_DIR / "tinyattn"


def module_name(path):
    parts = list(path.relative_to(DEVICE_DIR).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(name, path):
    """The modules of the package that `name` (at `path`) imports, by name."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            target = node.module if node.level == 0 else \
                ".".join(p for p in (base, node.module) if p)
            for alias in node.names:  # `from . import x` names a submodule or a name of target
                sub = target + "." + alias.name
                found.add(sub if sub in MODULES else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports(name, path) for name, path in MODULES.items()}


def find_cycle(graph):
    """A list of modules that import each other in a ring, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                ring = visit(nxt)
                if ring:
                    return ring
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            ring = visit(node)
            if ring:
                return ring
    return None


def test_the_graph_sees_the_imports():
    assert "tinyattn.nn.attention" in GRAPH["tinyattn"]
    assert "tinyattn.int8.kernels" in GRAPH["tinyattn.int8.layers"]  # from . import kernels
    assert "tinyattn.store" in GRAPH["tinyattn.int8.model"]  # from .. import store
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_import_cycle():
    ring = find_cycle(GRAPH)
    assert ring is None, "import cycle: " + " -> ".join(ring)
