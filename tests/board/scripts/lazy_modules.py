"""Print the modules that getting every name of tinyattn.LAZY adds to a fresh interpreter
(each name's submodule and what it imports), as a JSON list (tests/device/test_package_names.py,
host-driven: its dir() and Tab completion tests compare what they import with this).

Also the package's submodules named like a name of ulab.numpy (the folder int8: a real ulab
interns its dtype names, and dir() asks the package's __getattr__ for every interned name,
which imports a submodule of that name; int8/__init__.py holds two small functions only)."""

import json
import sys

import tinyattn
from ulab import numpy as np

before = set(sys.modules)
for name in tinyattn.LAZY:
    getattr(tinyattn, name)
for name in sorted(tinyattn.LAZY.submodules()):
    if hasattr(np, name):
        getattr(tinyattn, name)
print(json.dumps(sorted(set(sys.modules) - before)))
