"""The operand buffer of asm_pie.linear, made once when a layer is planned (plain Python:
every port can make and check it; only ESP32-S3 boards run the kernel).

The S3's PIE loads 128 bits from a 16-byte-aligned address (EE.VLD.128.IP ignores the low 4
bits), and the kernel's loop multiplies two 16-byte blocks a pass. So the weights become
signed int8 (w = u - 128, the offset binary's top bit flipped), each row padded with zeros to
a multiple of 32 bytes, and the buffer, a bytearray, holds from its first 16-byte boundary:

    [row: 32n bytes]      the source row, copied there by the kernel (as int8)
    [weights: cols * 32n] row j at 32n (j + 1), zero from `depth` on
    [16 bytes]            look-ahead room: the loop loads one block past what it multiplies

with n = ceil(depth / 32). A row's bytes past `depth` meet zero weights, so they never count.
The boundary is found with `address(buffer)` (asm_pie.address on the board); the kernel
rounds the buffer's address up to it the same way (MicroPython never moves a live object).
Cost: 1 byte a weight (plus padding and 32n + 32 bytes), beside the offset-binary W that the
viper kernel, the self-test and saving keep using.
"""

ALIGN = 16
BLOCK = 32  # bytes of one pass of the kernel's loop: two 128-bit multiplies


def passes(depth):
    """Passes of the kernel's inner loop: 32 items each."""
    return (depth + BLOCK - 1) // BLOCK


def size(cols, depth):
    """Bytes of the operand buffer of a (cols, depth) weight matrix, alignment slack in."""
    return ALIGN + BLOCK * passes(depth) * (cols + 1) + ALIGN


def start(address):
    """Offset of the first 16-byte boundary in a buffer at `address`."""
    return -address % ALIGN


def operands(w, cols, depth, address):
    """The operand buffer of offset-binary weights w (cols * depth bytes, row-major);
    address(buffer) is the buffer's address (asm_pie.address)."""
    if len(w) < cols * depth:
        raise ValueError("w holds %d bytes, (%d, %d) weights need %d"
                         % (len(w), cols, depth, cols * depth))
    out = bytearray(size(cols, depth))
    row = BLOCK * passes(depth)
    at = start(address(out)) + row
    for j in range(cols):
        src = j * depth
        for k in range(depth):
            out[at + k] = (w[src + k] ^ 128) & 255  # w may be signed (int8.load's)
        at += row
    return out
