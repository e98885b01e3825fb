"""The operand buffer of asm_mac16.linear, made once when a layer is planned (plain Python:
every port can make and check it; only xtensawin boards run the kernel).

MAC16 multiplies 16-bit halves of its registers and loads 32 bits at a time, so the int8
weights are widened once to int16 (w, not offset binary), each row padded with zeros to a
multiple of 4 items (one pass of the kernel's loop). The buffer, array('h'):

    [row: 4n + 2 items]  the source row, widened by the kernel (2 items of look-ahead room)
    [weights: cols * 4n] row j at 4n + 2 + 4n j, zero from `depth` on
    [2 items]            look-ahead room: the loop loads one word past what it multiplies

with n = ceil(depth / 4). Cost: 2 bytes a weight (plus 8n + 8 bytes), beside the 1-byte
offset-binary W that the viper kernel, the self-test and saving keep using.
"""

import array


def passes(depth):
    """Passes of the kernel's inner loop: 4 items each."""
    return (depth + 3) // 4


def size(cols, depth):
    """Items of the operand buffer of a (cols, depth) weight matrix."""
    n4 = 4 * passes(depth)
    return n4 + 2 + cols * n4 + 2


def operands(w, cols, depth):
    """The operand buffer of offset-binary weights w (cols * depth bytes, row-major)."""
    if len(w) < cols * depth:
        raise ValueError("w holds %d bytes, (%d, %d) weights need %d"
                         % (len(w), cols, depth, cols * depth))
    n4 = 4 * passes(depth)
    out = array.array("h", bytes(2 * size(cols, depth)))
    at = n4 + 2
    for j in range(cols):
        row = j * depth
        for k in range(depth):
            out[at + k] = (w[row + k] & 255) - 128
        at += n4
    return out
