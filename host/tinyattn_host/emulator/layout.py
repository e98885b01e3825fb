"""Where things live in the emulated machine's RAM (128 MB at address 0, identity-mapped).

Every region is a bump allocator: nothing is ever freed or moved while an Emulator lives, as
MicroPython never moves a live object (the kernels' headers hold byte distances).
"""

VECBASE = 0x2000  # exception vectors: a breakpoint on each (xtensa_cpu)
TRAMPOLINE = 0x10000  # `callx8 a15`, then the return breakpoint
STUBS = 0x11000  # mp_fun_table entry i "is" STUBS + STUB_SPACING i: a breakpoint or code
STUB_SPACING = 64
FUN_TABLE = 0x12000  # the mp_fun_table the code reaches through its constant table
STACK_TOP = 0x07F00000
ALIGN = 16  # MicroPython's heap blocks on a 32-bit port are 16 bytes


class Region:
    """A bump allocator over [start, end)."""

    def __init__(self, name, start, end):
        self.name, self.next, self.end = name, start, end

    def take(self, size, align=ALIGN):
        at = -(-self.next // align) * align
        if at + size > self.end:
            raise MemoryError("the emulator's %s region is full (%d bytes asked)"
                              % (self.name, size))
        self.next = at + max(size, 1)
        return at


def regions():
    """Fresh allocators for one Emulator: runtime structures, code, objects, buffers."""
    return {"runtime": Region("runtime", 0x13000, 0x100000),
            "code": Region("code", 0x100000, 0x800000),
            "objects": Region("objects", 0x800000, 0x1000000),
            "buffers": Region("buffers", 0x1000000, 0x07000000)}
