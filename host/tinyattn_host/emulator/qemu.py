"""QEMU's Xtensa system emulator, Debian's `qemu-system-misc`: found, started and spoken to.

The machine is `-M sim -cpu dc233c` (an LX4 with windowed registers, LOOP, MAC16, MUL32 and
DIV32; 128 MB of RAM at address 0 through the MMU's reset identity map), halted at start
(`-S`), with its gdbstub on a Unix socket in a private temporary folder (no port to pick or
race for; 3 to 5 times quicker a packet than `-gdb stdio`). Only the gdb remote serial protocol's
basic packets are used (g/G registers, m/M memory, Z0 breakpoints, c continue): QEMU 7.2
answers `p`/`P` only to a gdb that read its target description, which Xtensa has none of.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time

from ..errors import HostError
from ..virtual.unixport_process import die_with_parent

QEMU = os.environ.get("QEMU_XTENSA", "qemu-system-xtensa")
INSTALL_HINT = "apt-get install qemu-system-misc (it provides qemu-system-xtensa)"
ARGS = ["-M", "sim", "-cpu", "dc233c", "-nodefaults", "-display", "none", "-monitor", "none",
        "-serial", "none", "-S"]
REPLY_SECONDS = 120.0
"""Longest wait for one reply: a kernel's instruction limit (xtensa_cpu) stops it far sooner."""


class EmulatorError(HostError):
    """The emulator cannot do what was asked (not installed, a fault...); the message says
    why, in one line."""


def qemu_path():
    """The qemu-system-xtensa to run, or None when it is not installed."""
    return shutil.which(QEMU)


def missing_reason():
    """One line naming what is missing to run the emulator, or None when nothing is."""
    if qemu_path() is None:
        return "no %s: %s" % (QEMU, INSTALL_HINT)
    return None


class GdbRemote:
    """A halted QEMU and its gdbstub: packets out, replies in.

    QEMU's system-mode stub acks each packet with '+' (skipped here) and never waits for the
    client's ack of its replies, so none is sent.
    """

    def __init__(self, path=None, args=ARGS):
        """QEMU at `path` (default: the dc233c's, qemu_path()) with machine `args`."""
        path = path or qemu_path()
        if path is None:
            raise EmulatorError(missing_reason())
        self._folder = tempfile.TemporaryDirectory(prefix="tinyattn-qemu-")
        where = os.path.join(self._folder.name, "gdb")
        self.proc = subprocess.Popen(
            [path] + args + ["-chardev", "socket,id=gdb,path=%s,server=on,wait=off" % where,
                             "-gdb", "chardev:gdb"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=die_with_parent)  # QEMU resumes the machine when gdb goes away
        self.sock = socket.socket(socket.AF_UNIX)
        self._buf = b""
        try:
            self._connect(where)
        except BaseException:
            self.close()
            raise

    def _connect(self, where):
        """Connect once QEMU listens (it creates the socket before it starts the machine)."""
        deadline = time.monotonic() + REPLY_SECONDS
        while True:
            try:
                self.sock.connect(where)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if self.proc.poll() is not None:
                    raise EmulatorError("qemu-system-xtensa exited: %s" % (
                        self.proc.stderr.read().decode(errors="replace").strip()
                        or "no message"))
                if time.monotonic() > deadline:
                    raise EmulatorError("qemu-system-xtensa opened no gdb socket in %.0f s"
                                        % REPLY_SECONDS)
                time.sleep(0.01)  # the socket file appears when QEMU has parsed its options
        self.sock.settimeout(REPLY_SECONDS)

    def _read_more(self):
        try:
            chunk = self.sock.recv(65536)
        except socket.timeout:
            chunk = None
        if not chunk:
            self.close()
            raise EmulatorError("qemu-system-xtensa %s" % (
                "gave no answer in %.0f s" % REPLY_SECONDS if chunk is None
                else "closed its gdb connection"))
        self._buf += chunk

    def _reply(self):
        while True:
            start = self._buf.find(b"$")
            end = self._buf.find(b"#", start) if start >= 0 else -1
            if start >= 0 and end >= 0 and len(self._buf) >= end + 3:
                body = self._buf[start + 1:end]
                self._buf = self._buf[end + 3:]
                return body.decode("latin-1")
            self._read_more()

    def command(self, packet):
        """Send one packet, return the reply's body."""
        data = packet.encode("latin-1")
        self.sock.sendall(b"$%s#%02x" % (data, sum(data) & 0xFF))
        return self._reply()

    def checked(self, packet):
        reply = self.command(packet)
        if reply != "OK":
            raise EmulatorError("gdbstub answered %r to %s" % (reply, packet[:40]))

    # ---- registers, memory, breakpoints, running -------------------------------------------
    def registers(self):
        """Every register of the g packet, as ints (the core's gdb register order)."""
        hexa = self.command("g")
        return [int.from_bytes(bytes.fromhex(hexa[i:i + 8]), "little")
                for i in range(0, len(hexa), 8)]

    def set_registers(self, values):
        self.checked("G" + "".join((v & 0xFFFFFFFF).to_bytes(4, "little").hex()
                                   for v in values))

    CHUNK = 2000  # bytes a packet: QEMU's PacketSize is 4096 hex digits

    def read(self, address, size):
        out = bytearray()
        for at in range(address, address + size, self.CHUNK):
            n = min(self.CHUNK, address + size - at)
            reply = self.command("m%x,%x" % (at, n))
            if reply.startswith("E") or len(reply) != 2 * n:
                raise EmulatorError("cannot read %d bytes at 0x%x: %s" % (n, at, reply))
            out += bytes.fromhex(reply)
        return bytes(out)

    def write(self, address, data):
        for at in range(0, len(data), self.CHUNK):
            part = bytes(data[at:at + self.CHUNK])
            self.checked("M%x,%x:%s" % (address + at, len(part), part.hex()))

    def add_breakpoint(self, address):
        self.checked("Z0,%x,3" % address)

    def cont(self):
        """Run until the next stop; returns the stop reply."""
        reply = self.command("c")
        if not reply.startswith(("T", "S")):
            raise EmulatorError("the emulator stopped with %r" % reply)
        return reply

    def close(self):
        self.sock.close()
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.proc.stderr.close()
        self._folder.cleanup()
