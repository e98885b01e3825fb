"""Letting go of the modules a one-time task imported (an int8 load, the backend's choice, the
input's steps): each is dropped from sys.modules and from its package's attributes unless it
was imported before the task, so its code is garbage once nothing of it is held (a later
import reads it again). This module always goes with them."""

import gc
import sys


CHECK = ("tinyattn.int8.spec", "tinyattn.int8.fields", "tinyattn.int8.classes", "tinyattn.nn.flow",
         "tinyattn.nn.spec", "tinyattn.nn.arguments", "tinyattn.link.wire", "tinyattn.link")
"""The modules an int8 description's check (spec.py) imports, the kinds' schemas aside."""


def check_modules():
    """CHECK and the kinds' schema modules imported (int8/layers_schema.py's kind): what a
    load or a save lets go of after its check."""
    return CHECK + tuple(name for name in sys.modules if name.endswith("_schema"))


def let_go(before, names):
    """Drop the modules `names` that are not in `before`, and this one; then collect."""
    for name in names:
        if name not in before:
            _drop(name)
    _drop(__name__)
    gc.collect()


def _drop(name):
    if name in sys.modules:
        del sys.modules[name]
        parent, _, child = name.rpartition(".")
        try:
            delattr(sys.modules[parent], child)
        except (KeyError, AttributeError):
            pass
