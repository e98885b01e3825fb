"""Print the modules that getting every name of tinyattn.LAZY adds to a fresh interpreter
(each name's submodule and what it imports), as a JSON list (tests/device/test_package_names.py, host-driven: its Tab
completion test compares what a REPL imports with this)."""

import json
import sys

import tinyattn

before = set(sys.modules)
for name in tinyattn.LAZY:
    getattr(tinyattn, name)
print(json.dumps(sorted(set(sys.modules) - before)))
