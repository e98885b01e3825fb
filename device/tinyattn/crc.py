"""CRC-32 (zlib's): binascii.crc32 when the firmware has it, else a 256-entry table."""

import array

try:
    from binascii import crc32
except ImportError:  # a firmware without binascii.crc32
    crc32 = None

_table = None


def crc32_table(data, crc=0):
    """CRC-32 of `data` continuing from `crc`, with a table made on first use."""
    global _table
    if _table is None:
        _table = array.array("I", [0] * 256)
        for n in range(256):
            c = n
            for _ in range(8):
                c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
            _table[n] = c
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = _table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


if crc32 is None:
    crc32 = crc32_table


def crc32_file(f, length, chunk=256):
    """CRC-32 of the next `length` bytes of the open file f, read `chunk` bytes at a time
    (bounded memory, whatever the file's size); OSError when the file ends sooner."""
    view = memoryview(bytearray(chunk))
    crc = 0
    while length > 0:
        got = f.readinto(view[:min(chunk, length)])
        if not got:
            raise OSError("the file ended %d bytes early" % length)
        crc = crc32(view[:got], crc)
        length -= got
    return crc
