"""LAZY's layer kinds (device/tinyattn/__init__.py) are what tinyattn_host/lazy_names.py writes
from the declarations (nn/spec.py): a kind declared, renamed or moved to another module there
and not written here fails, naming the command that writes them."""

import pytest

from tinyattn_host import lazy_names
from tinyattn_host.device_modules import device_module


def test_the_package_names_each_declared_kind_as_the_declarations_write_it():
    text = lazy_names.INIT.read_text()
    assert lazy_names.written(text) == text, (
        "LAZY's layer kinds differ from nn/spec.py's: run python -m tinyattn_host.lazy_names")


def test_the_lines_name_every_kind_and_its_module_as_a_keyword():
    lines = lazy_names.kind_lines()
    spec = device_module("nn/spec")
    for name, kind in spec.KINDS.items():
        assert '%s="nn.%s",' % (name, kind[spec.MODULE][1:]) in lines, name
    assert max(len(line) for line in lines.splitlines()) <= lazy_names.WIDTH


def test_a_stale_kind_line_is_found():
    text = lazy_names.INIT.read_text()
    stale = text.replace('Gelu="nn.gelu", ', "")
    assert stale != text and lazy_names.written(stale) == text
    with pytest.raises(ValueError, match="marker lines"):
        lazy_names.written(text.replace(lazy_names.END, ""))
