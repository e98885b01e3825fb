"""Kinds in one place (issue 37): what a layer kind does is asked of its declaration
(device/tinyattn/nn/spec.py, the int8 classes, host/tinyattn_host/reference/kinds.py), never
decided by comparing its name. This test reads every module of device/tinyattn and
host/tinyattn_host with ast and finds each comparison (==, !=, in, not in) of a value with a
declared kind's name (a string, or a tuple, list or set holding one, written there or named
by a module-level constant: STATELESS = ("Dense", ...); x in STATELESS). Only the modules of
ALLOWED may have one, each for the reason it gives, and each of them must still have one (an
entry that no longer compares goes)."""

import ast
from pathlib import Path

from tinyattn_host.reference.kinds import device_kinds

ROOT = Path(__file__).resolve().parents[2]
TREES = (ROOT / "device" / "tinyattn", ROOT / "host" / "tinyattn_host")

ALLOWED = {
    # the formats' own (each comparison is the definition of a file or a config it makes)
    "host/tinyattn_host/interop/llama2c.py":
        "llama2.c's file is one fixed sequence of kinds (Embedding, DecoderBlock..., RMSNorm, "
        "Classifier): the format's definition, not a question a declaration answers",
    "host/tinyattn_host/interop/describe.py":
        "it writes config entries from PyTorch modules: the names are what it makes",
    "host/tinyattn_host/checks/generate.py":
        "a language model file is llama2.c's sequence (Embedding first), as llama2c.py's",
}


def _names(node, kinds, constants):
    """The kind names a comparison's operand holds: a string, a tuple/list/set of them, or a
    module-level constant naming such a value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in kinds else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for item in node.elts for n in _names(item, kinds, constants)]
    if isinstance(node, ast.Name) and node.id in constants:
        return _names(constants[node.id], kinds, {})
    return []


def kind_comparisons(source, kinds):
    """[(line, kind name)] of each comparison of `source` with a kind's name."""
    tree = ast.parse(source)
    constants = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(
                isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
            for operand in [node.left] + node.comparators:
                found += [(node.lineno, name) for name in _names(operand, kinds, constants)]
    return found


def modules_comparing_kinds():
    kinds = set(device_kinds())
    found = {}
    for tree in TREES:
        for path in sorted(tree.rglob("*.py")):
            hits = kind_comparisons(path.read_text(), kinds)
            if hits:
                found[path.relative_to(ROOT).as_posix()] = hits
    return found


def test_the_reader_finds_each_form_of_comparison():
    source = ("a == 'Dense'\nif 'Tokens' != b: pass\nc in ('SelfAttention', 'x')\n"
              "d not in ['Gelu']\ne[0] == \"relu\"\nf = {'Dense': 1}\ng = 'Dense'\n"
              "ROW = ('Dense', 'Gelu')\nh in ROW\n")
    assert kind_comparisons(source, {"Dense", "Tokens", "SelfAttention", "Gelu"}) == [
        (1, "Dense"), (2, "Tokens"), (3, "SelfAttention"), (4, "Gelu"), (9, "Dense"),
        (9, "Gelu")]


def test_no_module_outside_the_registries_compares_kind_names():
    found = modules_comparing_kinds()
    outside = {path: hits for path, hits in found.items() if path not in ALLOWED}
    assert not outside, "modules comparing kind names (ask the declaration instead): %s" % (
        "; ".join("%s lines %s" % (p, sorted({line for line, _ in h}))
                  for p, h in sorted(outside.items())))


def test_each_allowed_module_still_compares():
    found = modules_comparing_kinds()
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, "ALLOWED names modules that no longer compare kind names: %s" % stale
