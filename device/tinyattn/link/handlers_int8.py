"""The handlers of the int8 model's messages (LOAD_QMODEL, FORWARD_INT8) and FORWARD's int8
part; QUANTIZE, which needs the float model, is handlers.py's. Same contract as handlers.py."""

import time

from .chunks import in_chunks, joined, piece, said
from .loaded import need_qmodel
from .records import field, integers, mask_of, only, shape_of


def load_qmodel(session, head, arrays):
    """An int8 model from its layer descriptions and integer arrays (as QUANTIZE replies)."""
    from ..int8.model_load import qmodel_from

    only(head, ("layers",))
    layers = field(head, "layers", "list")
    buffers = {}
    for name in arrays:
        buffers[name] = integers(arrays, name)
    session.qmodel = qmodel_from(layers, buffers)
    session.qmodel_rows = None  # not known: FORWARD_INT8 runs whole unless masked
    return session.qmodel.description(), session.qmodel.named_arrays()


def forward_int8(session, head, arrays):
    """The int8 model's integer output (int8, or int32 accumulators) for int8 input x.

    x goes into the session's input buffer, the same one while its size stays, so the model
    is planned once per batch shape (QSequential.forward_int plans for a new buffer). Run in
    chunks of what fits (chunks.py) where the samples are known: the mask's rows, or those
    of the float model the int8 one was quantized from; else whole."""
    only(head, ())
    mask = mask_of(arrays)
    qmodel = need_qmodel(session)
    rows, cols = shape_of(arrays, "x", None, 2)
    session.xq, _, _ = integers(arrays, "x", "b", session.xq)
    per = session.qmodel_rows
    count = mask.shape[0] if mask is not None else \
        rows // per if per and rows % per == 0 and rows else 1

    def run(at_once):
        parts, took = [], 0
        for s0 in range(0, count, at_once):
            s1 = min(s0 + at_once, count)
            x, m = piece(session.xq, s0, s1, count), piece(mask, s0, s1, count)
            start = time.ticks_us()
            y, out_rows, out_cols = qmodel.forward_int(x, len(x) // cols, cols, keep=keep_of(m))
            took += time.ticks_diff(time.ticks_us(), start)
            parts.append(("y", bytes(y) if at_once < count else y, qmodel.out_code(),
                          (out_rows, out_cols)))
        return parts, took

    (parts, took), at_once = in_chunks(session, "forward_int8", count, run)
    y = joined(parts)
    return said({"rows": y[3][0], "cols": y[3][1], "us": took}, at_once, count), [y]


def int8_forward(session, qmodel, x, mask):
    """FORWARD's int8 part: x quantized into the session's buffer, the integer layers run;
    the reply's head (scales, shape, time) and arrays (xq as quantized, y)."""
    from ..int8.numbers import quantize_tensor

    keep = keep_of(mask)
    rows, cols = x.shape
    reuse = session.xq if session.xq is not None and len(session.xq) == rows * cols else None
    session.xq = xq = quantize_tensor(x, qmodel.in_scale, out=reuse)
    start = time.ticks_us()
    y, out_rows, out_cols = qmodel.forward_int(xq, rows, cols, keep=keep)
    took = time.ticks_diff(time.ticks_us(), start)
    return ({"int8_us": took, "rows": out_rows, "cols": out_cols,
             "in_scale": qmodel.in_scale, "out_scale": qmodel.layers[-1].out_scale()},
            [("xq", xq, "b", (rows, cols)), ("y", y, qmodel.out_code(), (out_rows, out_cols))])


def keep_of(mask):
    """The B*S bytes of a float padding mask (B, S) the int8 layers take, checked; or None."""
    if mask is None:
        return None
    from ..int8.attention import keep_bytes
    from ..nn.pooling_masks import require_mask

    B, S = mask.shape
    require_mask(mask, B, S)
    return keep_bytes(mask, B * S, S)
