"""A request's samples in pieces of what fits: the board, not the host, sizes its work.

FORWARD, FORWARD_INT8, TRAIN_STEP and QUANTIZE run their batch in chunks of `at_once` samples: all of them
at first; when the heap runs out (MemoryError), its garbage is collected and the whole request
runs again with half as many at once, down to one sample (then the MemoryError goes to the
host: NO_MEMORY). A chunk size that had to be halved is kept for that work until the next
LOAD_MODEL, so later requests start there; the reply's head says `at_once` when it is fewer
than the request's samples (docs/protocol.md, "Work in pieces").
"""

import gc

CALIBRATION_BATCH = 16  # the samples QUANTIZE calibrates at once when they fit (int8.quantize's)


def in_chunks(session, work, largest, run):
    """(run(at_once), at_once): `largest` samples at once, or the fewer this session's
    `work` had to take before; halved on each MemoryError (run starts over: nothing it did
    before the error is kept, so run must change no state until it returns)."""
    at_once = min(largest, session.at_once.get(work, largest))
    while True:
        try:
            return run(at_once), at_once
        except MemoryError:
            if at_once == 1:
                raise
        gc.collect()  # outside the handler: the exception's references are gone
        at_once = (at_once + 1) // 2
        session.at_once[work] = at_once


def said(reply, at_once, largest):
    """The reply's head, with `at_once` when the pieces were fewer than `largest` samples."""
    if at_once < largest:
        reply["at_once"] = at_once
    return reply


def rows_a_sample(model):
    """The rows of x one sample of a Sequential is (its tokens, when it takes them as rows)."""
    from ..nn.flow import follow

    return follow(model.config())[1]


def samples(x, rows_a_sample):
    """How many samples the rows of x are: rows / rows_a_sample, or 1 when they do not divide
    (the model refuses such x by itself; one piece gives it that chance)."""
    rows = x.shape[0]
    return rows // rows_a_sample if rows % rows_a_sample == 0 and rows else 1


def piece(a, s0, s1, count):
    """Samples s0..s1-1 of a (rows, ...) array or list of `count` samples (its rows a
    sample: rows / count); a itself when that is all of it."""
    if a is None or (s0 == 0 and s1 == count):
        return a
    k = len(a) // count
    if hasattr(a, "shape") and len(a.shape) == 2:
        return a[s0 * k:s1 * k, :].copy()
    return a[s0 * k:s1 * k]


def joined(parts):
    """One reply array of the pieces' arrays, in order: ulab arrays stacked by rows, integer
    buffers (name, buffer, typecode, shape) concatenated with their rows added."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if len(first) == 4:
        data = b"".join(bytes(p[1]) for p in parts)
        rows = sum(p[3][0] for p in parts)
        return (first[0], data, first[2], (rows,) + tuple(first[3][1:]))
    from ulab import numpy as np

    return (first[0], np.concatenate(tuple(p[1] for p in parts), axis=0))
