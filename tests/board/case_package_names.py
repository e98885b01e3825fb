"""The package's names: each public name is its submodule's own; a name that is neither a
public name nor a submodule imports nothing; a submodule imports (case_package_dir.py has
dir() and help()).

Each test starts from a freshly imported package: tinyattn and its submodules are dropped
from sys.modules first, so what an earlier test imported does not count."""

import sys

import check




def modules_added_by(action):
    """The names action(package) adds to sys.modules, after a fresh import of the package."""
    package = check.fresh_import("tinyattn")
    before = set(sys.modules)
    action(package)
    return set(sys.modules) - before


def test_every_lazy_name_is_its_submodules_own():
    package = check.fresh_import("tinyattn")
    assert package.LAZY, "LAZY has no names"
    for name, module in package.LAZY.items():
        same = getattr(package, name) is getattr(sys.modules["tinyattn." + module], name)
        assert same, "tinyattn.%s is not tinyattn.%s.%s" % (name, module, name)


def test_help_shows_each_public_name_on_a_line_of_its_own():
    """help(tinyattn) prints each global as `name -- repr`: LAZY's repr is one name a line,
    beside its submodule (no dict on one line)."""
    package = check.fresh_import("tinyattn")
    lines = repr(package.LAZY).split("\n")[1:]
    check.equal(len(lines), len(package.LAZY), "lines of LAZY's repr")
    for line, name in zip(lines, sorted(package.LAZY)):
        check.equal(line.split(), [name, "tinyattn." + package.LAZY.get(name)], "help's line")


def test_help_shows_no_internals():
    """help(tinyattn) prints every global: no private helper among them, and each one line
    but LAZY's (the public names, one a line)."""
    package = check.fresh_import("tinyattn")
    for name, value in package.__dict__.items():
        private = name.startswith("_") and not name.endswith("__")
        assert not private, "help(tinyattn) shows the private %s" % name
        if name != "LAZY":
            assert "\n" not in repr(value), "help(tinyattn)'s %s is several lines" % name
        assert "function" not in repr(value), "help(tinyattn) shows %s as %r" % (name, value)


def test_other_names_import_nothing_and_submodules_import():
    has = []

    def ask(package):
        for name in ("", "/", ".", "nothing", "__pycache__"):
            has.append(hasattr(package, name))

    check.equal(sorted(modules_added_by(ask)), [], "modules imported by asking other names")
    check.equal(has, [False] * 5, "hasattr of names that are not the package's")
    found = {}

    def import_submodules(package):
        from tinyattn.int8 import kernels
        import tinyattn.bench

        found["kernels"], found["bench"] = kernels.__name__, tinyattn.bench.__name__

    after = modules_added_by(import_submodules)
    assert found["kernels"] == "tinyattn.int8.kernels", found["kernels"]
    assert found["bench"] == "tinyattn.bench", found["bench"]
    assert "tinyattn.link.server" not in after, "kernels or bench import tinyattn.link.server"
