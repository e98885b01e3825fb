"""The chip's own machine code, run: every xtensawin viper kernel in qemu-system-xtensa.

mpy-cross compiles the device's kernel modules for `-march=xtensawin` (what `make deploy`
ships to an ESP32-S3); each viper function's bytes are placed in an emulated Xtensa LX4 core
(QEMU's dc233c: windowed registers, as the S3's LX7) as MicroPython's loader places them,
with the runtime they call (mp_fun_table) emulated around them, and called with the very
buffers and headers the device's Python glue makes. tests/emulator checks them against the
integer reference and the unix port; `python -m tinyattn_host emulate` (`make emulate`)
counts their executed instructions (docs/chip.md).

    qemu.py          QEMU and its gdbstub        xtensa_cpu.py    one counted call on the core
    layout.py        the RAM map                 loader.py        a .mpy placed in memory
    buffers.py       CPython buffers mirrored    objects.py       object words and handles
    funtable.py      mp_fun_table's entries      native_stubs.py  the division stubs, as code
    xtensa_encode.py instruction words by hand   machine.py       Emulator: load, call, count
    device_glue.py   the device's glue in CPython, its viper functions in the emulator
    kernel_runs.py   each kernel on Attention(64, 4) shapes    counts.py  the kernels' table
    backend_counts.py viper and MAC16 side by side            s3.py  Espressif's ESP32-S3 machine
    pie_counts.py    the PIE kernel on it (QEMU_XTENSA_S3, python -m tinyattn_host emulate-pie)
    lm_counts.py     the int8 language model's token: instructions per kernel, each backend,
                     the chip estimate (emulate's second section)
    emulate_command.py  the emulate command: both sections, printed and written
"""
