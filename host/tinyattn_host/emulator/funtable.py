"""The entries of MicroPython's mp_fun_table (py/nativeglue.h, v1.28) that viper code calls,
emulated in Python at the breakpoint of each entry's stub (xtensa_cpu).

Why at a breakpoint and not as Xtensa stubs: the entries are MicroPython's C runtime
(mp_native_from_obj looks a buffer up through its type's buffer protocol), not code of ours
whose instructions matter; in Python they are a few lines each against the same object model
as the glue's (objects.py), and the count of the kernel's own instructions is untouched (a
breakpoint stops before the stub runs). Entries no kernel calls raise, naming themselves.
The integer division and modulo, called once a row, are Xtensa code instead (native_stubs.py);
their Python here checks that code (tests/emulator/test_emulator_cpu.py).
"""

from . import layout, native_stubs
from .objects import signed

NAMES = (
    "const_none_obj", "const_false_obj", "const_true_obj", "convert_obj_to_native",
    "convert_native_to_obj", "native_swap_globals", "load_name", "load_global",
    "load_build_class", "load_attr", "load_method", "load_super_method", "store_name",
    "store_global", "store_attr", "obj_subscr", "obj_is_true", "unary_op", "binary_op",
    "build_tuple", "build_list", "build_map", "build_set", "store_set", "list_append",
    "store_map", "make_function_from_proto_fun", "native_call_function_n_kw",
    "call_method_n_kw", "call_method_n_kw_var", "native_getiter", "native_iternext",
    "nlr_push", "nlr_pop", "native_raise", "import_name", "import_from", "import_all",
    "new_slice", "unpack_sequence", "unpack_ex", "delete_name", "delete_global",
    "new_closure", "arg_check_num_sig", "setup_code_state", "small_int_floor_divide",
    "small_int_modulo", "native_yield_from", "setjmp")
CONSTANTS = 3  # entries 0..2 are the objects None, False, True, not functions
INDEX = {name: i for i, name in enumerate(NAMES)}


class UnsupportedEntry(Exception):
    """The native code called an entry of mp_fun_table that the emulator does not provide."""


def floor_divide(a, b):
    """mp_small_int_floor_divide: Python's floor division of two machine ints."""
    return signed(a) // signed(b)


def modulo(a, b):
    """mp_small_int_modulo: the remainder with the divisor's sign, as Python's %."""
    return signed(a) % signed(b)


class FunTable:
    """The table's words (what the code loads) and the Python behind each entry."""

    def __init__(self, objects, stubs=layout.STUBS):
        """stubs: the address of entry 0's stub (entry i's is STUB_SPACING i further)."""
        self._objects = objects
        self.words = [objects.none, objects.false, objects.true] + [
            stubs + layout.STUB_SPACING * i for i in range(CONSTANTS, len(NAMES))]
        self.native = {INDEX[name]: stub for name, stub in native_stubs.STUBS.items()}
        self._entries = {
            INDEX["convert_obj_to_native"]: lambda a: objects.native_from_obj(a[0], a[1]),
            INDEX["convert_native_to_obj"]: lambda a: objects.native_to_obj(a[0], a[1]),
            INDEX["small_int_floor_divide"]: lambda a: floor_divide(a[0], a[1]),
            INDEX["small_int_modulo"]: lambda a: modulo(a[0], a[1]),
            INDEX["arg_check_num_sig"]: self._wrong_arguments,
            INDEX["native_raise"]: self._raise,
        }

    def table_bytes(self):
        return b"".join(w.to_bytes(4, "little") for w in self.words)

    def call(self, index, args):
        """The result of entry `index` for its arguments (a10..a15 of the caller)."""
        entry = self._entries.get(index)
        if entry is None:
            raise UnsupportedEntry("the native code called mp_fun_table[%d] (%s), which the "
                                   "emulator does not provide" % (
                                       index, NAMES[index] if index < len(NAMES) else "?"))
        return entry(args)

    @staticmethod
    def _wrong_arguments(args):
        sig = args[2]
        raise TypeError("function takes %d positional arguments but %d were given"
                        % (sig >> 17 & 0x7FFF, args[0]))

    def _raise(self, args):
        raise RuntimeError("the native code raised %r" % (self._objects.from_obj(args[0]),))
