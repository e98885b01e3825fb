"""The mip packages, as micropython-lib's aioble splits into parts sharing one folder:

    package.json         the core: device/tinyattn but the bench, into /lib/tinyattn
    package-bench.json   tinyattn.bench (bench.py, benchfit.py, benchplan.py), needs the core

    mpremote mip install github:OWNER/REPO                       # the core
    mpremote mip install github:OWNER/REPO/package-bench.json    # the bench, and the core
    python -m tinyattn_host.mip_package                          # rewrites both files

URLs are relative to the package.json, so they name no repository; mip resolves them against
the URL it was given (github:OWNER/REPO[@branch-or-tag]). A dependency cannot be relative:
the bench's names the core by REPOSITORY. `make deploy` puts both parts on a board.
"""

import json
import sys

from .deploy import PACKAGE, SOURCE_DIR, local_version, sources
from .unixport import ROOT

REPOSITORY = "github:OWNER/REPO"
BENCH_FILES = ("bench.py", "benchfit.py", "benchplan.py")
PARTS = {"core": ROOT / "package.json", "bench": ROOT / "package-bench.json"}


def part_sources(part):
    """The device files (relative to device/tinyattn) of the part "core" or "bench"."""
    bench = [p for p in sources() if p.as_posix() in BENCH_FILES]
    return bench if part == "bench" else [p for p in sources() if p not in bench]


def manifest(part="core"):
    """The package.json contents of a part: one [target, url] pair per file, deps, version."""
    base = SOURCE_DIR.relative_to(ROOT).as_posix()
    urls = [[f"{PACKAGE}/{p.as_posix()}", f"{base}/{p.as_posix()}"] for p in part_sources(part)]
    deps = [[REPOSITORY, None]] if part == "bench" else []  # None: the default branch
    return {"urls": urls, "deps": deps, "version": local_version()}


def render(part="core"):
    """A package.json as text, one file a line, as micropython-lib writes them."""
    content = manifest(part)
    urls = ",\n".join(f"    {json.dumps(pair)}" for pair in content["urls"])
    return (f'{{\n  "urls": [\n{urls}\n  ],\n  "deps": {json.dumps(content["deps"])},\n'
            f'  "version": {json.dumps(content["version"])}\n}}\n')


def main():
    for part, path in PARTS.items():
        path.write_text(render(part))
        print(f"wrote {path.relative_to(ROOT)}: {len(manifest(part)['urls'])} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
