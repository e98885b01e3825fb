"""Where the files the commands use are: the device package, the ulab stand-in, the data sets.

From a checkout they are its own folders (device/, tools/standin/, data/); an installed wheel
carries copies of them in tinyattn_host/bundle/, laid out as in the checkout (setup.py puts
them there). Every module finds them here, and nowhere else.
"""

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUNDLE = HERE / "bundle"
CHECKOUT = HERE.parents[1]
ROOT = BUNDLE if (BUNDLE / "device" / "tinyattn").is_dir() else CHECKOUT
DEVICE_DIR = ROOT / "device"
STANDIN_DIR = ROOT / "tools" / "standin"
DATA_DIR = ROOT / "data"
INSTALLED = ROOT == BUNDLE

# What setup.py copies into the wheel's bundle/: the paths the commands read, from ROOT.
BUNDLED = ("device/tinyattn", "tools/standin", "data", "package.json", "package-bench.json")


def package_version(source_dir=DEVICE_DIR / "tinyattn"):
    """The version of tinyattn: its one definition, `__version__` in device/tinyattn/__init__.py
    (the board reports it, the host package and the wheel are named by it)."""
    text = (Path(source_dir) / "__init__.py").read_text()
    return re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.MULTILINE).group(1)
