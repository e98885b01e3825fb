"""The host package's shape: no import circle (imports inside functions count too), no
module over the size a reader takes in at once."""

import ast
from pathlib import Path

import tinyattn_host

PACKAGE = Path(tinyattn_host.__file__).parent
MAX_LINES = 350


def module_name(path):
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["tinyattn_host", *parts])


def modules():
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(path, known):
    """The tinyattn_host modules `path` imports, anywhere in it."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = base + "." + alias.name
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != name}


def cycle(graph):
    """One import circle of `graph` as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start, [start])
            if found:
                return found
    return None


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_circle_in_the_host_package():
    known = modules()
    graph = {name: imports(path, known) for name, path in known.items()}
    assert graph["tinyattn_host.board.board"] >= {"tinyattn_host.board.deploy"}
    assert cycle(graph) is None, " -> ".join(cycle(graph))


def test_no_host_module_is_too_long():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text().splitlines())) > MAX_LINES}
    assert not long, long
