"""Print the modules that importing every submodule of tinyattn.LAZY adds to a fresh
interpreter, as a JSON list (tests/device/test_package_names.py, host-driven: its Tab
completion test compares what a REPL imports with this)."""

import json
import sys

import tinyattn

before = set(sys.modules)
for module in tinyattn.LAZY.values():
    __import__("tinyattn." + module)
print(json.dumps(sorted(set(sys.modules) - before)))
