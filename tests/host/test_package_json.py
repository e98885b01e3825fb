"""package.json: what `mpremote mip install github:OWNER/REPO` installs."""

import json

from mpremote import mip

from tinyattn_host import mip_package
from tinyattn_host.unixport import DEVICE_DIR, ROOT

PACKAGE_JSON = ROOT / "package.json"


def test_package_json_is_up_to_date():
    assert PACKAGE_JSON.read_text() == mip_package.render(), (
        "package.json is stale: run  python -m tinyattn_host.mip_package")


def test_it_lists_every_device_file_once_with_the_package_version():
    content = json.loads(PACKAGE_JSON.read_text())
    sources = sorted(p.relative_to(DEVICE_DIR).as_posix()
                     for p in (DEVICE_DIR / "tinyattn").rglob("*.py"))
    assert sorted(target for target, _ in content["urls"]) == sources
    for target, url in content["urls"]:
        assert url == "device/" + target
        assert (ROOT / url).is_file()
    init = (DEVICE_DIR / "tinyattn" / "__init__.py").read_text()
    assert f'__version__ = "{content["version"]}"' in init
    assert content["deps"] == []


def test_github_urls_resolve_to_the_repository_files():
    """As mpremote's mip does it: URLs relative to github:OWNER/REPO/package.json."""
    base = "github:OWNER/REPO/package.json".rpartition("/")[0]
    target, url = json.loads(PACKAGE_JSON.read_text())["urls"][0]
    assert mip._rewrite_url(f"{base}/{url}") == (
        f"https://raw.githubusercontent.com/OWNER/REPO/HEAD/device/{target}")
    assert mip._rewrite_url(f"{base}/{url}", "v0.1.0") == (
        f"https://raw.githubusercontent.com/OWNER/REPO/v0.1.0/device/{target}")
