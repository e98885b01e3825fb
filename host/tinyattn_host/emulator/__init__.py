"""The chip's own machine code, run: every xtensawin viper kernel in qemu-system-xtensa.

mpy-cross compiles the device's kernel modules for `-march=xtensawin` (what `make deploy`
ships to an ESP32-S3); each viper function's bytes are placed in an emulated Xtensa LX4 core
(QEMU's dc233c: windowed registers, as the S3's LX7) as MicroPython's loader places them,
with the runtime they call (mp_fun_table) emulated around them, and called with the very
buffers and headers the device's Python glue makes. `python -m tinyattn_host.emulator`
(`make emulate`) runs them all against the integer reference and counts their instructions.

    qemu.py        QEMU and its gdbstub          xtensa_cpu.py  one counted call on the core
    layout.py      the RAM map                   loader.py      a .mpy placed in memory
    buffers.py     CPython buffers mirrored      objects.py     object words and handles
    funtable.py    mp_fun_table's entries        machine.py     Emulator: load, call, count
    device_glue.py the device's int8 glue in CPython, its viper functions in the emulator
    kernel_runs.py every kernel on its test configurations, checked
    counts.py      executed instructions per MAC beside chipcost's static estimate
"""
