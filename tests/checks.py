"""Helpers the encoder, state_dict and digits tests share: float32 rounding, relative error,
finite differences, gradient comparison, bad-input and docstring checks, a configuration's
name."""

import ast

import numpy as np
import pytest

from tinyattn_host.virtual.unixport import MicroPythonError


def f32(a):
    """a rounded to float32, as float64 (what the device holds)."""
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def config_id(**parts):
    """A test configuration's name (its fixture's, its failure messages'): each part in order
    as `name` (True), `nameVALUE` (a number), its value (a string), or nothing (False, None);
    joined by "-", "plain" when no part shows."""
    shown = []
    for name, value in parts.items():
        if value is True:
            shown.append(name)
        elif isinstance(value, str):
            shown.append(value)
        elif value is not False and value is not None:
            shown.append("%s%s" % (name, value))
    return "-".join(shown) or "plain"


def rel(got, want):
    """Relative error in the Frobenius norm."""
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


def numeric_grad(f, x, eps=1e-6):
    """d f() / d x by central differences, f scalar-valued, x changed in place and restored."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        up = f()
        x[i] = old - eps
        down = f()
        x[i] = old
        g[i] = (up - down) / (2 * eps)
    return g


def assert_grads_close(got, want, tol):
    """Every gradient within tol relative (norm). A key bias ("...bk") has an exact gradient
    of 0 (it adds one constant to a softmax row's scores): it is judged on bq's scale."""
    for name, value in want.items():
        scale = want[name[:-2] + "bq"] if name.endswith("bk") else value
        assert np.linalg.norm(got[name] - value) <= tol * np.linalg.norm(scale), name


def missing_docstrings(path):
    """Public classes, methods and functions of a source file without a docstring (and the
    module itself, as "<module>")."""
    tree = ast.parse(path.read_text())
    missing = [] if ast.get_docstring(tree) else ["<module>"]
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in [node] + [n for n in node.body if isinstance(n, ast.FunctionDef)]:
                if not item.name.startswith("_") and not ast.get_docstring(item):
                    missing.append(item.name)
    missing += [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                and not n.name.startswith("_") and not ast.get_docstring(n)]
    return missing


def assert_value_error(run, code, words):
    """run(code) raises a ValueError on the device whose message holds every word."""
    with pytest.raises(MicroPythonError) as err:
        run(code)
    assert err.value.kind == "ValueError", err.value.output
    for word in words:
        assert word in err.value.message
