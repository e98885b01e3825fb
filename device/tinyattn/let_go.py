"""Letting go of the modules a one-time task imported (a model's check and its load, an int8
save, the backend's choice, the input's steps): each is dropped from sys.modules and from its
package's attributes unless it was imported before the task, so its code is garbage once
nothing of it is held (a later import reads it again). This module always goes with them."""

import gc
import sys


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
