"""The shape of a body of code, read with ast: which of its modules import which (at module
level or inside a function alike), an import circle named module by module, and the modules
over the size a reader takes in at once. The device, host and test layout tests share it."""

import ast

MAX_LINES = 350


def package_modules(root, package):
    """{dotted name: path} of every module of the package folder root/package."""
    found = {}
    for path in (root / package).rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imports(name, path, known):
    """The modules of `known` that module `name` (at `path`) imports, by name."""
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
                found.add(sub if sub in known else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known and m != name}


def graph(known):
    """{module: the modules of `known` it imports} for {name: path} `known`."""
    return {name: imports(name, path, known) for name, path in known.items()}


def find_cycle(graph):
    """A list of modules that import each other in a ring (its first repeated last), or None."""
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


def too_long(root, allowed=()):
    """{path relative to root: lines} of the .py files below `root` over MAX_LINES, but for
    the paths in `allowed` (each kept whole for the reason its own docstring gives)."""
    long = {}
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES and name not in allowed:
            long[name] = lines
    return long
