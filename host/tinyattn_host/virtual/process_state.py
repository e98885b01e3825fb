"""What an interpreter process is doing, as Linux's /proc tells it (the virtual board asks).

`micropython_pid` finds the process that runs MicroPython when the command is a wrapper (a
shell or Python script that starts the real interpreter: the wrapper's own SIGINT handler
says nothing about MicroPython's); `catches_sigint` says whether MicroPython runs code (it
installs its handler only then); `waits_for_input` whether it is blocked reading its stdin
(LINE: a one-byte read, as the REPL reads; STREAM: a larger read, or a poll, as running code
such as the link waits) and `bytes_read` how many bytes its reads have taken so far;
`hung_in_a_lock` whether it waits for a lock that nothing can release (one thread, an untimed
futex wait: a unix port whose SIGINT handler raises KeyboardInterrupt out of code holding its
heap's lock, as one built with threads and no GIL does). Where /proc cannot answer (another
system, no permission), waits_for_input says UNKNOWN.
"""

import os
import signal

LINE, STREAM, UNKNOWN = "line", "stream", "unknown"
# System call numbers by ELF machine and class (32/64-bit): read, and the calls that wait on
# several descriptors (poll, ppoll, select, pselect6, and their time64 forms on 32-bit).
# A wait stopped and continued (SIGSTOP/SIGCONT: a debugger, a suspended laptop) goes on in
# restart_syscall (219 on x86_64, 0 on i386 and arm, 128 on aarch64 and riscv): a wait too.
_READ, _WAIT = 0, 1
_SYSCALLS = {
    (62, 64): ({0}, {7, 23, 219, 270, 271}),                # x86_64
    (3, 32): ({3}, {0, 82, 142, 168, 308, 309, 413, 414}),  # i386 (also on an x86_64 kernel)
    (62, 32): ({3}, {0, 82, 142, 168, 308, 309, 413, 414}),  # x32 binaries: i386 numbers
    (183, 64): ({63}, {72, 73, 128}),                       # aarch64
    (40, 32): ({3}, {0, 142, 168, 335, 336, 413, 414}),     # arm
    (243, 64): ({63}, {72, 73, 128}),                       # riscv64
    (243, 32): ({63}, {72, 73, 128, 413, 414}),             # riscv32
}

# futex (and futex_time64 on 32-bit) by ELF machine and class, as _SYSCALLS
_FUTEX = {(62, 64): {202}, (3, 32): {240, 422}, (62, 32): {240, 422}, (183, 64): {98},
          (40, 32): {240, 422}, (243, 64): {98}, (243, 32): {422}}
_FUTEX_WAIT_OPS = {0, 9}  # FUTEX_WAIT, FUTEX_WAIT_BITSET (the private flag and clock masked)


def micropython_pid(pid, tty):
    """The process that runs MicroPython under process `pid`: `pid` itself, or the deepest
    descendant whose stdin is the terminal `tty` (the one a wrapper started)."""
    while True:
        child = next((c for c in _children(pid) if _stdin(c) == tty), None)
        if child is None:
            return pid
        pid = child


def catches_sigint(pid):
    """Whether process `pid` has a SIGINT handler installed (SigCgt in /proc/PID/status)."""
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    except OSError:
        pass
    return False


def waits_for_input(pid):
    """LINE, STREAM, None (running, or blocked in something else), or UNKNOWN."""
    numbers = _syscall_numbers(pid)
    try:
        with open("/proc/%d/syscall" % pid) as status:
            fields = status.read().split()
    except OSError:
        return UNKNOWN
    if numbers is None or not fields:
        return UNKNOWN
    if not fields[0].isdigit():  # "running", or "-1 ..." (blocked outside a system call)
        return None
    number, args = int(fields[0]), [int(a, 16) for a in fields[1:4]]
    if number in numbers[_READ] and args[0] == 0:
        return LINE if args[2] == 1 else STREAM
    if number in numbers[_WAIT]:
        return STREAM
    return None


def hung_in_a_lock(pid):
    """Whether process `pid` is its only thread and blocked in a futex wait without a
    timeout: no other thread can wake it, so it waits for ever."""
    try:
        with open("/proc/%d/status" % pid) as status:
            threads = next((line.split()[1] for line in status if line.startswith("Threads:")),
                           None)
        with open("/proc/%d/syscall" % pid) as syscall:
            fields = syscall.read().split()
    except OSError:
        return False
    machine = _machine(pid)
    if threads != "1" or len(fields) < 5 or not fields[0].isdigit() or machine is None:
        return False
    op, timeout = int(fields[2], 16) & 0x7F, int(fields[4], 16)
    return (int(fields[0]) in _FUTEX.get(machine, ()) and op in _FUTEX_WAIT_OPS
            and timeout == 0)


def bytes_read(pid):
    """The bytes process `pid` has read so far (rchar: every read, its stdin's included),
    or None when /proc does not say."""
    try:
        with open("/proc/%d/io" % pid) as io:
            for line in io:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _children(pid):
    found = []
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as children:
                found += map(int, children.read().split())
    except OSError:
        pass
    return found


def _stdin(pid):
    try:
        return os.readlink("/proc/%d/fd/0" % pid)
    except OSError:
        return None


def _syscall_numbers(pid):
    """(read numbers, wait numbers) for the executable of `pid`, from its ELF header."""
    machine = _machine(pid)
    return None if machine is None else _SYSCALLS.get(machine)


def _machine(pid):
    """(ELF machine, 32 or 64) of the executable of `pid`, None when it cannot be read."""
    try:
        with open("/proc/%d/exe" % pid, "rb") as exe:
            header = exe.read(20)
    except OSError:
        return None
    if len(header) < 20 or header[:4] != b"\x7fELF":
        return None
    bits = 64 if header[4] == 2 else 32
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    return machine, bits
