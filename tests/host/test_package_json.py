"""package.json and package-bench.json: what `mpremote mip install github:OWNER/REPO[/...]`
installs, the core and the bench (which depends on the core), as aioble splits into parts."""

import json

from mpremote import mip

from tinyattn_host.board import mip_package
from tinyattn_host.locations import DEVICE_DIR, ROOT


def _content(part):
    return json.loads(mip_package.PARTS[part].read_text())


def test_both_package_files_are_up_to_date():
    for part, path in mip_package.PARTS.items():
        assert path.read_text() == mip_package.render(part), (
            f"{path.name} is stale: run  python -m tinyattn_host mip-package")


def test_the_parts_list_every_device_file_once_with_the_package_version():
    sources = sorted(p.relative_to(DEVICE_DIR).as_posix()
                     for p in (DEVICE_DIR / "tinyattn").rglob("*.py"))
    listed = [target for part in mip_package.PARTS for target, _ in _content(part)["urls"]]
    assert sorted(listed) == sources
    init = (DEVICE_DIR / "tinyattn" / "__init__.py").read_text()
    for part in mip_package.PARTS:
        content = _content(part)
        for target, url in content["urls"]:
            assert url == "device/" + target
            assert (ROOT / url).is_file()
        assert f'__version__ = "{content["version"]}"' in init


def test_the_bench_is_its_own_package_that_needs_the_core():
    core, bench = _content("core"), _content("bench")
    assert sorted(t for t, _ in bench["urls"]) == [
        "tinyattn/bench/__init__.py", "tinyattn/bench/decoder.py", "tinyattn/bench/fit.py",
        "tinyattn/bench/plan.py",
        "tinyattn/bench/stream.py", "tinyattn/bench/timing.py"]
    assert not any("bench" in t for t, _ in core["urls"])
    assert core["deps"] == []
    assert bench["deps"] == [[mip_package.CORE, None]]  # the core


def test_the_core_does_not_import_the_bench():
    for target, url in _content("core")["urls"]:
        text = (ROOT / url).read_text()
        for name in ("bench", "benchfit", "benchplan"):
            assert "from .%s import" % name not in text, target
            assert "tinyattn.%s" % name not in text, target


def test_github_urls_resolve_to_the_repository_files():
    """As mpremote's mip does it: URLs relative to github:OWNER/REPO/package.json."""
    for part, path in mip_package.PARTS.items():
        base = f"github:OWNER/REPO/{path.name}".rpartition("/")[0]
        target, url = _content(part)["urls"][0]
        assert mip._rewrite_url(f"{base}/{url}") == (
            f"https://raw.githubusercontent.com/OWNER/REPO/HEAD/device/{target}")
        assert mip._rewrite_url(f"{base}/{url}", "v0.1.0") == (
            f"https://raw.githubusercontent.com/OWNER/REPO/v0.1.0/device/{target}")
