"""A .mpy compiled for xtensawin, placed in the emulator as MicroPython's loader places it.

What py/persistentcode.c does for native code from mpy-cross (no relocations: those are
mpy_ld's, for natmods): the machine code is copied as it is (4-byte aligned: its `l32r`
literals are PC-relative), and each function object points at a module context whose
constant table the code reaches at entry (py/emitnative.c: fun_obj->context, then
context->constants.qstr_table and .obj_table, then obj_table[n] = &mp_fun_table). Here:

    fun_obj  = [type, context, child_table, code]      (mp_obj_fun_bc_t's first words)
    context  = [type, globals, qstr_table, obj_table]  (mp_module_context_t)
    obj_table[i] = the module's constant i: the fun table's address, or an object handle

The qstr table holds the module's qstr indices (the code only passes them on, and the int8
kernels pass none). An @micropython.asm_xtensa function's code is placed the same way; it is
called as a C function of up to 4 word arguments (machine.py), as py/objfun.c calls it.
"""

from dataclasses import dataclass

from ..chipcost.mpy_native import FUN_TABLE, native_raw_codes, read_mpy
from . import layout


ASM = 3  # RawCode kind of @micropython.asm_xtensa: called as a C function, no fun_obj


@dataclass
class LoadedFunction:
    name: str
    kind: int  # 1 native, 2 viper, 3 inline assembler (mpy_native.RawCode)
    entry: int  # address of its first byte (the code starts with a jump over its literals)
    code: bytes
    fun_obj: int


def _constant(objects, obj, fun_table):
    """The word of one constant of the .mpy's object table (see mpy_native._read_object)."""
    if obj == FUN_TABLE:
        return fun_table
    if obj is None or obj is Ellipsis or isinstance(obj, bool):
        return objects.to_obj(obj)
    kind, payload = obj
    value = {5: lambda: payload.decode(), 6: lambda: bytes(payload),
             7: lambda: int(payload), 8: lambda: float(payload)}.get(kind, lambda: payload)()
    return objects.to_obj(value)


def load_module(cpu, regions, objects, data, patch=None, fun_table=layout.FUN_TABLE):
    """{qualified name: LoadedFunction} of every native/viper function of a .mpy file.

    patch(name, code) -> code, if given, changes a function's bytes before they are placed
    (the deliberately wrong kernel of the tests); fun_table: the mp_fun_table's address.
    """
    qstrs, module = read_mpy(data)
    runtime = regions["runtime"]
    qstr_table = runtime.take(2 * max(len(qstrs), 1))
    cpu.write(qstr_table, b"".join(i.to_bytes(2, "little") for i in range(len(qstrs))))
    words = [_constant(objects, obj, fun_table) for obj in module.objects]
    obj_table = runtime.take(4 * max(len(words), 1))
    cpu.write(obj_table, b"".join(w.to_bytes(4, "little") for w in words))
    context = runtime.take(16)
    cpu.write(context, _words(0, 0, qstr_table, obj_table))
    loaded = {}
    for name, rc in native_raw_codes(data).items():
        code = rc.machine_code
        if patch is not None:
            code = patch(name, code)
        entry = regions["code"].take(len(code), 4)
        cpu.write(entry, code)
        fun_obj = runtime.take(16)
        cpu.write(fun_obj, _words(0, context, 0, entry))
        loaded[name] = LoadedFunction(name, rc.kind, entry, bytes(code), fun_obj)
    return loaded


def _words(*values):
    return b"".join((v & 0xFFFFFFFF).to_bytes(4, "little") for v in values)
