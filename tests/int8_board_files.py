"""What a board case that checks an int8 model bit for bit needs besides the host quantizer
(tinyattn_host.quantize): inputs no float32 rounding can move across a rounding boundary, and
every layer's output as the files check.layers_match reads."""

import numpy as np

def robust_input(x, scale, margin=1e-3):
    """x moved (by at most 2 margin scale) so that no x / scale lies within margin of a
    rounding boundary: the board's float32 quantize_tensor then rounds every value as the
    host does."""
    x = np.array(x, dtype=np.float64)
    for _ in range(4):
        t = np.clip(x / scale, -128, 127)
        frac = t - np.floor(t)
        near = (np.abs(frac - 0.5) < margin) & (np.abs(t) < 127)
        if not near.any():
            return x
        x = np.where(near, x + 2 * margin * scale, x).astype(np.float32).astype(np.float64)
    raise AssertionError("could not move x off the rounding boundaries")


def layer_files(specs, outputs):
    """({"layer<i>.bin": bytes} of every layer's output, [[typecode, rows, cols], ...]) for a
    board case's check.layers_match: int8, or little-endian int32 for a Dense that keeps its
    accumulator."""
    files, layers = {}, []
    for i, (spec, out) in enumerate(zip(specs, outputs)):
        wide = spec["kind"] == "Dense" and spec["mult"] is None  # the int32 accumulator
        dtype = np.dtype("<i4" if wide else "i1")
        assert np.array_equal(out.astype(dtype), out), "layer %d leaves its type" % i
        files["layer%d.bin" % i] = out.astype(dtype).tobytes()
        layers.append(["i" if wide else "b", *out.shape])
    return files, layers

