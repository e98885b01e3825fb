"""The mip packages, as micropython-lib's aioble splits into parts sharing one folder:

    package.json         the core: device/tinyattn but the bench, into /lib/tinyattn
    package-bench.json   tinyattn.bench (the folder bench/), needs the core

    mpremote mip install package.json          # in a checkout: the core
    mpremote mip install package-bench.json    # in a checkout: the bench, and the core
    .venv/bin/python -m tinyattn_host mip-package   # rewrites both files

URLs are relative to the package.json, so they name no repository; mip resolves them against
where it found the file (a checkout, or github:<owner>/<name>[@tag]). A dependency is not
resolved that way: mpremote opens a .json dependency from the folder it runs in, so the
bench's dependency, CORE, works from a checkout (install the core first when installing from
GitHub). `make deploy` puts both parts on a board.
"""

import json

from .deploy import PACKAGE, SOURCE_DIR, local_version, sources
from ..locations import ROOT

CORE = "package.json"  # the bench's dependency: the core's package file
BENCH_DIR = "bench"  # the bench part: this folder of device/tinyattn
PARTS = {"core": ROOT / "package.json", "bench": ROOT / "package-bench.json"}


def part_sources(part):
    """The device files (relative to device/tinyattn) of the part "core" or "bench"."""
    bench = [p for p in sources() if p.parts[0] == BENCH_DIR]
    return bench if part == "bench" else [p for p in sources() if p not in bench]


def manifest(part="core"):
    """The package.json contents of a part: one [target, url] pair per file, deps, version."""
    base = SOURCE_DIR.relative_to(ROOT).as_posix()
    urls = [[f"{PACKAGE}/{p.as_posix()}", f"{base}/{p.as_posix()}"] for p in part_sources(part)]
    deps = [[CORE, None]] if part == "bench" else []
    return {"urls": urls, "deps": deps, "version": local_version()}


def render(part="core"):
    """A package.json as text, one file a line, as micropython-lib writes them."""
    content = manifest(part)
    urls = ",\n".join(f"    {json.dumps(pair)}" for pair in content["urls"])
    return (f'{{\n  "urls": [\n{urls}\n  ],\n  "deps": {json.dumps(content["deps"])},\n'
            f'  "version": {json.dumps(content["version"])}\n}}\n')


def mip_package_command(args):
    """The mip-package command: rewrite package.json and package-bench.json."""
    for part, path in PARTS.items():
        path.write_text(render(part))
        print(f"wrote {path.relative_to(ROOT)}: {len(manifest(part)['urls'])} files")
    return 0

