"""Which int8 class a declared layer kind has (nn/spec.py's INT8), and the companions of an
int8 class: its kind's schema and conversion, in <module>_schema.py and <module>_convert.py
beside the module that runs it (int8/layers.py says why). Each is imported when asked, so a
model pays the heap of the kinds it uses only."""

import sys


def int8_class(declared):
    """The int8 class of a declared kind (nn/spec.py), imported now; None if it has none. A
    model pays the heap of the int8 modules its kinds use only."""
    from ..nn.spec import INT8, module_of

    if declared[INT8] is None:
        return None
    module, _, name = module_of(declared[INT8], "tinyattn.int8").rpartition(".")
    return getattr(__import__(module, None, None, [name]), name)


def companion(cls, role):
    """The class of int8 class cls's kind in its module's companion <module>_<role>, imported
    now: role "schema", what its saved description must hold (int8/layers_schema.py), or
    "convert", its making from a float layer (int8/layers_convert.py)."""
    return getattr(__import__(cls.__module__ + "_" + role, None, None, [cls.kind]), cls.kind)


CHECK = ("tinyattn.int8.spec", "tinyattn.int8.fields", "tinyattn.int8.classes", "tinyattn.nn.flow",
         "tinyattn.nn.spec", "tinyattn.nn.arguments", "tinyattn.link.wire", "tinyattn.link")
"""The modules an int8 description's check (spec.py) imports, the kinds' schemas aside."""


def imported(role):
    """The names of the companion modules of `role` imported now (<module>_<role>)."""
    return tuple(name for name in sys.modules if name.endswith("_" + role))


def check_modules():
    """CHECK and the kinds' schema companions imported: what an int8 load or save lets go
    of after its check (let_go.py)."""
    return CHECK + imported("schema")
