"""The emulated chip with MicroPython's native-code runtime around it: load a .mpy, call its
viper functions with Python values, get Python values back, count every call.

    with Emulator() as emu:
        linear = emu.function("device/tinyattn/int8/kernels.py", "linear")
        linear(header, weights)          # buffers are mirrored (buffers.py), updated in place
        emu.calls[-1]                    # KernelCall(name, instructions, stub_calls)
"""

from dataclasses import dataclass
from pathlib import Path

from ..chipcost.mpy_native import compile_xtensawin
from . import layout
from .buffers import BufferMirror
from .funtable import FunTable
from .loader import ASM, load_module
from .objects import TYPE_PTR, ObjectSpace, signed
from .xtensa_cpu import DEFAULT_LIMIT, XtensaCpu

MAX_ARGS = 16


@dataclass
class KernelCall:
    name: str
    instructions: int
    stub_calls: int
    asm: bool = False  # an @micropython.asm_xtensa function (else viper or native)


class EmulatedFunction:
    """A loaded viper function, called like the Python one."""

    def __init__(self, emulator, loaded):
        self._emu, self.loaded = emulator, loaded
        self.__name__ = loaded.name

    def __call__(self, *args):
        return self._emu.call(self.loaded, args)


class Emulator:
    """One QEMU, its memory regions, object space and loaded modules."""

    def __init__(self, limit=DEFAULT_LIMIT, patch=None, s3=False):
        """limit: instructions a call may run; patch(name, code) -> code changes a function's
        machine code before it is placed (the deliberately wrong kernel of the tests);
        s3: Espressif's ESP32-S3 machine (s3.py), not the dc233c."""
        if s3:
            from . import s3 as place

            cpu = place.S3Cpu
        else:
            place, cpu = layout, XtensaCpu
        self.s3 = s3
        self.regions = place.regions()
        self.objects = ObjectSpace(self.regions["objects"], None)
        self.funtable = FunTable(self.objects, place.STUBS)
        self.cpu = cpu(self.funtable.native)
        self.limit = limit
        self.buffers = self.objects.buffers = BufferMirror(self.cpu, self.regions["buffers"])
        self.fun_table = place.FUN_TABLE
        self.cpu.write(self.fun_table, self.funtable.table_bytes())
        self._args = self.regions["runtime"].take(4 * MAX_ARGS)
        self._modules = {}
        self.patch = patch
        self.calls = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.cpu.close()

    def module(self, source):
        """{name: EmulatedFunction} of a MicroPython source file compiled for xtensawin
        (loaded once)."""
        key = str(Path(source).resolve())
        if key not in self._modules:
            loaded = load_module(self.cpu, self.regions, self.objects,
                                 compile_xtensawin(source), self.patch, self.fun_table)
            self._modules[key] = {n: EmulatedFunction(self, f) for n, f in loaded.items()}
        return self._modules[key]

    def function(self, source, name):
        functions = self.module(source)
        if name not in functions:
            raise KeyError("%s has no native or viper function %s (it has: %s)"
                           % (source, name, ", ".join(sorted(functions))))
        return functions[name]

    def call(self, loaded, args):
        """A viper/native function as MicroPython calls it, (fun_obj, n_args, n_kw, args);
        an asm_xtensa one as a C function of its arguments' words (py/objfun.c: an int, or a
        buffer's address), returning the int in a2."""
        if loaded.kind == ASM:
            if len(args) > 4:
                raise TypeError("an asm_xtensa function takes at most 4 arguments")
            regs = [self.objects.native_from_obj(self.objects.to_obj(a), TYPE_PTR)
                    for a in args]
        else:
            if len(args) > MAX_ARGS:
                raise TypeError("at most %d arguments" % MAX_ARGS)
            words = [self.objects.to_obj(a) for a in args]
            self.cpu.write(self._args, b"".join(w.to_bytes(4, "little") for w in words))
            regs = [loaded.fun_obj, len(args), 0, self._args]
        self.buffers.push()
        try:
            result = self.cpu.call(loaded.entry, regs, self.funtable.call, self.limit)
        except BaseException:
            self.buffers.resync()  # a call stopped half-way may have written anything
            raise
        self.buffers.pull()
        self.calls.append(KernelCall(loaded.name, result.instructions, result.stub_calls,
                                     loaded.kind == ASM))
        return signed(result.value) if loaded.kind == ASM else self.objects.from_obj(result.value)
