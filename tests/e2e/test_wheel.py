"""The host package installs anywhere: a wheel built from this checkout, installed in a fresh
venv, runs `tinyattn run --port virtual` from a folder that is not the checkout (the device
package and the data sets travel in the wheel, tinyattn_host/bundle/)."""

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tinyattn_host import __version__
from tinyattn_host.locations import BUNDLED, CHECKOUT, package_version
from tinyattn_host.virtual.unixport import interpreter
from tinyattn_host.virtual.unixport_process import has_raw_repl

# What a build reads: the sources setup.py packs and bundles (copied, so that the build's
# build/ and *.egg-info land in a temporary folder, not in the checkout).
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "host") + BUNDLED


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in BUILD_INPUTS:
        if (CHECKOUT / name).is_dir():
            shutil.copytree(CHECKOUT / name, source / name, ignore=shutil.ignore_patterns(
                "__pycache__", "*.mpy", "*.egg-info", "bundle"))
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(CHECKOUT / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(source)], check=True, timeout=600)
    (built,) = out.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv with the wheel alone installed; its dependencies are this test venv's
    (a .pth names its site-packages, whose editable install of the checkout it does not run)."""
    where = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = subprocess.run([str(where / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(where / "bin" / "python"),
                    "install", "-q", "--no-deps", "--no-index", str(wheel)],
                   check=True, timeout=600)
    return where


def test_the_wheel_carries_the_device_package_and_the_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for inside in ("device/tinyattn/__init__.py", "device/tinyattn/link/wire.py",
                   "tools/standin/ulab/numpy.py", "data/digits.csv",
                   "data/japanese_vowels/JapaneseVowels_TEST.ts", "package.json"):
        assert "tinyattn_host/bundle/" + inside in names, inside
    assert wheel.name.startswith(f"tinyattn_host-{package_version()}-")


def test_the_installed_command_names_one_version(venv, tmp_path):
    done = subprocess.run([str(venv / "bin" / "tinyattn"), "--version"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == f"tinyattn {__version__}" == f"tinyattn {package_version()}"
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import tinyattn_host.locations as l; print(l.INSTALLED, l.ROOT)"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    installed, root = where.stdout.split()
    assert installed == "True" and str(venv) in root


needs_virtual_board = pytest.mark.skipif(
    not has_raw_repl(interpreter()), reason="the virtual board needs a unix port with a raw REPL")


def run_installed(venv, command, where, home):
    """A command of the installed package, run in the folder `where` (not the checkout)."""
    env = {"PATH": "/usr/bin:/bin", "MICROPYTHON": interpreter(), "HOME": str(home)}
    where.mkdir(exist_ok=True)
    return subprocess.run([str(venv / "bin" / command[0])] + command[1:], cwd=where, env=env,
                          capture_output=True, text=True, timeout=900)


@needs_virtual_board
def test_run_on_the_virtual_board_from_anywhere(venv, tmp_path):
    done = run_installed(venv, ["tinyattn", "run", "--port", "virtual", "--digits-rows", "0",
                                "--vowels-rows", "0"], tmp_path / "work", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "PASS:" in done.stdout
    assert not any((tmp_path / "work").iterdir())  # it wrote nothing where it ran


@needs_virtual_board
def test_deploy_from_anywhere_as_python_m(venv, tmp_path):
    done = run_installed(venv, ["python", "-m", "tinyattn_host", "deploy", "--port", "virtual",
                                "--flash", "flash"], tmp_path / "work", tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "work" / "flash" / "lib" / "tinyattn" / "__init__.mpy").exists()
