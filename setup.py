"""The wheel carries what the commands need besides the host package: the device package, the
ulab stand-in and the data sets, copied into tinyattn_host/bundle/ as laid out here (the list
and the locator are host/tinyattn_host/locations.py). An editable install reads the checkout."""

import re
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = re.search(r"BUNDLED = \(([^)]*)\)", (HERE / "host" / "tinyattn_host" / "locations.py")
                    .read_text()).group(1).replace('"', "").replace(" ", "").split(",")
VERSION = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""",
                    (HERE / "device" / "tinyattn" / "__init__.py").read_text(), re.M).group(1)


class BuildWithBundle(build_py):
    """build_py, then the bundle beside the host package (not for an editable install)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        bundle = Path(self.build_lib) / "tinyattn_host" / "bundle"
        for part in filter(None, BUNDLED):
            source, target = HERE / part, bundle / part
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.mpy"))
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)


setup(version=VERSION, cmdclass={"build_py": BuildWithBundle})
