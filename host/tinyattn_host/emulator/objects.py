"""MicroPython objects as the native code sees them: 32-bit words.

A small int v is the word (v << 1) | 1 (MicroPython's object representation A). A buffer is
its mirrored address (buffers.py), which mp_native_from_obj gives back for a pointer type as
mp_get_buffer gives a bytearray's or an array's items. Anything else is a handle: the address
of a 16-byte slot in the emulator's object region, which the native code only passes back to
mp_fun_table entries (it never reads the slot); the Python value behind it lives here.
"""

from .buffers import is_buffer

SMALL_INT_MIN, SMALL_INT_MAX = -(1 << 30), (1 << 30) - 1
# MP_NATIVE_TYPE_* of py/runtime0.h
TYPE_OBJ, TYPE_BOOL, TYPE_INT, TYPE_UINT, TYPE_PTR = 0, 1, 2, 3, 4
TYPE_NAMES = {0: "object", 1: "bool", 2: "int", 3: "uint", 4: "ptr", 5: "ptr8", 6: "ptr16",
              7: "ptr32"}


def signed(word):
    word &= 0xFFFFFFFF
    return word - (1 << 32) if word >> 31 else word


class ObjectSpace:
    """Python values <-> object words, and mp_native_from_obj / mp_native_to_obj."""

    def __init__(self, region, buffers):
        self._region, self.buffers = region, buffers
        self._values = {}  # handle -> value
        self._handles = {}  # id(value) -> handle, for values that must keep one identity
        self.none, self.false, self.true = (self.handle(v) for v in (None, False, True))

    def handle(self, value):
        key = id(value)
        if key not in self._handles:
            h = self._region.take(16)
            self._handles[key], self._values[h] = h, value
        return self._handles[key]

    def to_obj(self, value):
        if value is None or isinstance(value, bool):
            return {None: self.none, False: self.false, True: self.true}[value]
        if isinstance(value, int) and SMALL_INT_MIN <= value <= SMALL_INT_MAX:
            return ((value << 1) | 1) & 0xFFFFFFFF
        if is_buffer(value):
            return self.buffers.address_of(value)
        return self.handle(value)

    def from_obj(self, word):
        if word & 1:
            return signed(word) >> 1
        buf = self.buffers.owner(word)
        if buf is not None:
            return buf
        if word not in self._values:
            raise ValueError("the native code returned 0x%x, which is no object" % word)
        return self._values[word]

    def native_from_obj(self, word, kind):
        """mp_native_from_obj: the machine word a viper argument of type `kind` gets."""
        kind &= 0xF
        if kind == TYPE_OBJ:
            return word
        value = self.from_obj(word)
        if kind == TYPE_BOOL:
            return int(bool(value))
        if kind not in (TYPE_INT, TYPE_UINT) and is_buffer(value):
            return self.buffers.address_of(value)
        if isinstance(value, int):  # an int, or an int that is an address
            return value & 0xFFFFFFFF
        raise TypeError("can't convert %s to %s" % (type(value).__name__,
                                                     TYPE_NAMES.get(kind, kind)))

    def native_to_obj(self, word, kind):
        """mp_native_to_obj: the object a viper function returns for a value of `kind`."""
        kind &= 0xF
        if kind == TYPE_OBJ:
            return word
        if kind == TYPE_BOOL:
            return self.to_obj(bool(word))
        return self.to_obj(signed(word) if kind == TYPE_INT else word & 0xFFFFFFFF)
