"""package.json for mip: `mpremote mip install github:OWNER/REPO` puts device/tinyattn in /lib.

    python -m tinyattn_host.mip_package      rewrites package.json from device/tinyattn

URLs are relative to package.json, so the file names no repository; mip resolves them against
the URL it was given (github:OWNER/REPO[@branch-or-tag]).
"""

import json
import sys

from .deploy import PACKAGE, SOURCE_DIR, local_version, sources
from .unixport import ROOT

PACKAGE_JSON = ROOT / "package.json"


def manifest():
    """The package.json contents: one [target, url] pair per .py file of the device package."""
    base = SOURCE_DIR.relative_to(ROOT).as_posix()
    urls = [[f"{PACKAGE}/{p.as_posix()}", f"{base}/{p.as_posix()}"] for p in sources()]
    return {"urls": urls, "deps": [], "version": local_version()}


def render():
    """package.json as text, one file a line, as micropython-lib writes them."""
    content = manifest()
    urls = ",\n".join(f"    {json.dumps(pair)}" for pair in content["urls"])
    return (f'{{\n  "urls": [\n{urls}\n  ],\n  "deps": {json.dumps(content["deps"])},\n'
            f'  "version": {json.dumps(content["version"])}\n}}\n')


def main():
    PACKAGE_JSON.write_text(render())
    print(f"wrote {PACKAGE_JSON.relative_to(ROOT)}: {len(manifest()['urls'])} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
