"""The layer kinds' lines of LAZY in device/tinyattn/__init__.py, written from the declarations
(nn/spec.py): each kind with its class's module. `python -m tinyattn_host.lazy_names` rewrites
them; tests/host/test_lazy_names.py holds the file equal to what this writes.

Written here, not derived on the board: `import tinyattn` must stay near free (deriving LAZY
there imports the declarations, 11.7 KB of heap on the i686 port), and the kind names must be
keywords in the file (interned: MicroPython's dir() and Tab completion find a name only by
asking __getattr__ for each interned one)."""

import sys

from .device_modules import device_module
from .locations import DEVICE_DIR

INIT = DEVICE_DIR / "tinyattn" / "__init__.py"
START = "    # the layer kinds (nn/spec.py), written by `python -m tinyattn_host.lazy_names`:\n"
END = "    # (the layer kinds end)\n"
WIDTH = 99


def kind_lines():
    """The lines naming each declared kind's module, in declaration order, as keywords."""
    spec = device_module("nn/spec")
    items = ['%s="%s"' % (name, spec.module_of(kind[spec.MODULE], "nn"))
             for name, kind in spec.KINDS.items()]
    lines, line = [], "   "
    for item in items:
        if len(line) + len(item) + 2 > WIDTH:
            lines.append(line + "\n")
            line = "   "
        line += " " + item + ","
    return "".join(lines + [line + "\n"])


def written(text):
    """`text` (__init__.py's) with its kinds' lines as kind_lines() writes them; ValueError
    when it lacks the marker lines."""
    if START not in text or END not in text:
        raise ValueError("%s has lost LAZY's marker lines %r, %r" % (INIT, START, END))
    head, rest = text.split(START, 1)
    return head + START + kind_lines() + END + rest.split(END, 1)[1]


def main():
    text = INIT.read_text()
    again = written(text)
    if again != text:
        INIT.write_text(again)
    print("%s: LAZY's layer kinds %s" % (INIT, "rewritten" if again != text else "up to date"))


if __name__ == "__main__":
    sys.exit(main())
