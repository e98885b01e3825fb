"""The handlers of the link's messages: (session, head, arrays) -> (head, arrays of the reply).

Each checks its head fields and arrays (records.py), then calls the package: its public
API, and store's and the int8 path's checks of what a request would load, which run before
the loaded model is let go. The reply's arrays are (name, ulab float array) or (name, buffer,
typecode, shape) entries. `session` (server.Session) holds what the host has loaded.
"""

import gc
import sys
import time

from .. import __version__
from .chunks import CALIBRATION_BATCH, in_chunks, joined, piece, rows_a_sample, said, samples
from .framing import LinkError
from .records import (RequestRows, expect, field, integers, matrix, mask_of, only,
                      require_finite, shape_of)
from .speed import bench
from .handlers_int8 import forward_int8, int8_forward, load_qmodel
from .loaded import need_model, need_qmodel
from .run import run
from .wire import (ATTENTION, BAD_VALUE, BENCH, CHUNK, FORWARD, FORWARD_INT8, GET_WEIGHTS,
                   HELLO, LOAD_MODEL, LOAD_QMODEL, MAX_HEAD, MAX_SCORES, MAX_SEQ_LEN, PROTOCOL,
                   QUANTIZE, STATUS, RUN, STREAM, TRAIN_STEP)


def hello(session, head, arrays):
    only(head, ())
    expect(arrays, ())
    impl = sys.implementation
    gc.collect()
    return {
        "protocol": PROTOCOL, "tinyattn": __version__,
        "micropython": "%d.%d.%d" % impl.version[:3],
        "machine": getattr(impl, "_machine", sys.platform), "platform": sys.platform,
        "ulab": _ulab_version(), "mpy": getattr(impl, "_mpy", None),
        "float": _float_bytes(), "free": gc.mem_free(), "chunk": CHUNK, "max_message": session.max_message(),
        "max_head": MAX_HEAD,
    }, ()


def status(session, head, arrays):
    only(head, ())
    expect(arrays, ())
    return {
        "kbd_intr": session.kbd_intr, "frames": session.frames, "errors": session.errors,
        "model": session.model is not None, "qmodel": session.qmodel is not None,
        "free": gc.mem_free(),
    }, ()


def attention(session, head, arrays):
    """One Attention forward with the weights sent; y and optionally the weights A."""
    from ..nn.attention import Attention

    only(head, ("E", "H", "S", "bias", "causal", "attention"))
    E, H, S = field(head, "E", "int", low=1), field(head, "H", "int", low=1), \
        field(head, "S", "int", low=1)
    bias, causal = field(head, "bias", "bool", True), field(head, "causal", "bool", False)
    maps = field(head, "attention", "bool", False)
    if E % H:
        raise LinkError(BAD_VALUE, "head field 'E' (%d) must be a multiple of 'H' (%d)"
                        % (E, H))
    names = ["W" + n for n in "qkvo"] + (["b" + n for n in "qkvo"] if bias else [])
    expect(arrays, names + ["x"])
    for name in names:  # before the layer is made: E is as large as the bytes sent
        shape_of(arrays, name, (E, E) if name[0] == "W" else (E,))
    rows, cols = shape_of(arrays, "x", None, 2)
    if cols != E or rows % S or rows * H * S > MAX_SCORES:
        raise LinkError(BAD_VALUE, "x must be (B*S, E) = (B*%d, %d) with B*H*S*S at most "
                        "%d, got %r" % (S, E, MAX_SCORES, (rows, cols)))
    layer = Attention(E, H, use_bias=bias)
    for name, param, _ in layer.collect_params(False):
        param[:] = matrix(arrays, name, param.shape)
    x = matrix(arrays, "x")
    layer.keep_weights = maps  # an inference forward keeps the weights only when asked
    start = time.ticks_us()
    y = layer.forward(x, S, causal=causal)
    took = time.ticks_diff(time.ticks_us(), start)
    return {"us": took}, [("y", y), ("A", layer.A_cache)] if maps else [("y", y)]


def sequence_length(entry):
    """The length of the sequences a (checked) config entry's layer works on, where its
    declaration says one (nn/spec.py's flow, "tokens"), else None."""
    from ..nn.spec import FLOW, arguments, kind_of

    kind = kind_of(entry[0])
    for step, at in kind[FLOW]:
        if step == "tokens":
            return arguments(kind, entry[1:])[at]
    return None


def load_model(session, head, arrays):
    """A Sequential from its config and float32 parameters (named as collect_params): shapes
    and finite values checked once, before the loaded model is let go."""
    from ..store import build_model, check_arrays

    only(head, ("config",))
    config = field(head, "config", "list")
    shapes = dict((name, shape if code == "f" else code)
                  for name, (code, shape, _) in arrays.items())
    check_arrays(config, shapes)  # a request refused leaves the loaded model
    for name in arrays:
        require_finite(arrays, name)
    for i, entry in enumerate(config):
        S = sequence_length(entry)
        if S is not None and S > MAX_SEQ_LEN:
            raise LinkError(BAD_VALUE, "config entry %d: seq_len %r; at most %d over the "
                            "link" % (i, S, MAX_SEQ_LEN))
    session.model = session.optimizer = session.qmodel = None
    session.at_once = {}  # a new model: its requests start with all their samples at once
    gc.collect()
    session.model = build_model(config,
                                lambda name, param: matrix(arrays, name, param.shape, param))
    gc.collect()
    return {"params": session.model.num_params(), "config": session.model.config(),
            "free": gc.mem_free()}, ()


def forward(session, head, arrays):
    """Logits of a batch (with its padding mask, array "mask" (B, S), when given); the first
    attention layer's weights when asked; with "int8", the int8 model's output for the same
    batch too, x quantized here with its input scale (as QSequential.forward does). Run in
    chunks of what fits (chunks.py)."""
    only(head, ("attention", "int8"))
    maps = field(head, "attention", "bool", False)
    mask = mask_of(arrays)
    model = need_model(session)
    qmodel = need_qmodel(session) if field(head, "int8", "bool", False) else None
    x = matrix(arrays, "x")
    attention = _attention_layer(model) if maps else None
    count = samples(x, rows_a_sample(model))

    def run(at_once):
        parts, took = [], [0, 0]
        for s0 in range(0, count, at_once):
            s1 = min(s0 + at_once, count)
            parts.append(_forward_piece(session, model, qmodel, attention,
                                        piece(x, s0, s1, count), piece(mask, s0, s1, count),
                                        took, at_once < count))
        return parts, took

    (parts, took), at_once = in_chunks(session, "forward", count, run)
    reply = dict(parts[0][0])
    reply["us"] = took[0]
    if qmodel is not None:
        reply["int8_us"] = took[1]
        reply["rows"] = sum(p[0]["rows"] for p in parts)
    return said(reply, at_once, count), [joined([p[1][i] for p in parts])
                                         for i in range(len(parts[0][1]))]


def _forward_piece(session, model, qmodel, attention, x, mask, took, copy):
    """(head, arrays) of FORWARD on the samples x (and mask); their times added to took;
    the int8 buffers, which the session reuses, copied when `copy` (more pieces follow)."""
    if attention is not None:
        attention.keep_weights = True  # an inference forward keeps them only when asked
    start = time.ticks_us()
    logits = model.forward(x, False, mask)
    took[0] += time.ticks_diff(time.ticks_us(), start)
    out = [("logits", logits)]
    if attention is not None:
        out.append(("attention", attention.A_cache))
        attention.keep_weights = False
    if qmodel is None:
        return {}, out
    logits = None
    reply, more = int8_forward(session, qmodel, x, mask)
    took[1] += reply["int8_us"]
    if copy:
        more = [(name, bytes(buf), code, shape) for name, buf, code, shape in more]
    return reply, out + more


def train_step(session, head, arrays):
    """One optimizer step on a batch; the optimizer (and its state) lives until reload.

    A step that fails (a non-finite loss or gradient) leaves the weights as they were;
    one whose update is not finite unloads the model rather than keep broken weights.
    """
    from ..training import gradients, update
    from ..nn.optim import SGD, Adam

    only(head, ("optimizer", "lr"))
    kind = field(head, "optimizer", "str", "sgd")
    if kind not in ("sgd", "adam"):
        raise LinkError(BAD_VALUE, "head field 'optimizer' must be 'sgd' or 'adam', got %r"
                        % (kind,))
    lr = field(head, "lr", "number", 0.01)  # the optimizer checks its range
    expect(arrays, ("x", "labels"))
    model = need_model(session)
    x = matrix(arrays, "x")
    labels, _, shape = integers(arrays, "labels", "i")
    if len(shape) != 1:
        raise LinkError(BAD_VALUE, "array labels must be 1-D, got shape %r" % (shape,))
    if session.optimizer is None or (kind, lr) != session.optimizer_settings:
        make = SGD if kind == "sgd" else Adam
        session.optimizer = make(model.collect_params(), lr=lr)
        session.optimizer_settings = (kind, lr)
    count = samples(x, rows_a_sample(model))

    def pieces(at_once):
        for s0 in range(0, count, at_once):
            s1 = min(s0 + at_once, count)
            part = piece(labels, s0, s1, count)
            yield (piece(x, s0, s1, count), part, None,
                   1.0 if at_once == count else len(part) / len(labels))

    start = time.ticks_us()
    try:
        loss, at_once = in_chunks(session, "train", count,
                                  lambda at_once: gradients(model, session.optimizer,
                                                            pieces(at_once)))
        loss = update(model, session.optimizer, loss)
    except ValueError:
        if not _weights_finite(model):
            session.model = session.optimizer = None
        raise
    return said({"loss": loss, "us": time.ticks_diff(time.ticks_us(), start)}, at_once,
                count), ()


def get_weights(session, head, arrays):
    only(head, ())
    expect(arrays, ())
    model = need_model(session)
    return {"config": model.config()}, [(name, p) for name, p, _ in model.collect_params(False)]


def quantize(session, head, arrays):
    """Quantize the loaded model with a calibration batch; reply the int8 model, which takes
    the place of the session's (let go first when the two do not fit together; a refused
    request keeps it). Calibrated 16 samples at a time (int8.quantize's batch_size), fewer
    when they do not fit (chunks.py: the same scales, bit for bit)."""
    from ..int8.convert import quantize

    only(head, ())
    mask = mask_of(arrays)
    model = need_model(session)
    # a language model takes its token ids whole; other models' rows are read a batch at a time
    x = matrix(arrays, "x") if hasattr(model.layers[0], "num_embeddings") else \
        RequestRows(arrays, "x")
    largest = min(CALIBRATION_BATCH, samples(x, rows_a_sample(model)))
    run = lambda at_once: quantize(model, x, mask=mask, batch_size=at_once)  # noqa: E731
    for last_try in (session.qmodel is None, True):
        try:
            session.qmodel, at_once = in_chunks(session, "quantize", largest, run)
            break
        except MemoryError:
            if last_try:
                raise
        session.qmodel = session.qmodel_rows = None  # the old int8 model makes room
        session.at_once.pop("quantize", None)
        gc.collect()
    session.qmodel_rows = rows_a_sample(model)  # FORWARD_INT8's rows a sample
    if not hasattr(model.layers[0], "num_embeddings"):
        session.qmodel.prepare()  # its input's code and steps now, while the heap is whole
    return said(session.qmodel.description(), at_once, largest), session.qmodel.named_arrays()


def stream(session, head, arrays):
    """The loaded (causal) model's output for one more token x (1, F), through a Stream of
    `window` tokens (nn/stream.py); a new stream on reset, a new window or a new model."""
    from ..nn.stream import Stream, check_frame, frame_width

    only(head, ("window", "reset"))
    window = field(head, "window", "int", low=1, high=MAX_SEQ_LEN)
    reset = field(head, "reset", "bool", False)
    expect(arrays, ("x",))
    model = need_model(session)
    x = matrix(arrays, "x")
    held = session.stream
    check_frame(x, held[1].width if held is not None and held[0] is model
                else frame_width(model))  # a refused token leaves the stream as it was
    if reset or held is None or held[0] is not model or held[1].window != window:
        session.stream = held = None
        gc.collect()
        session.stream = held = (model, Stream(model, window))
    start = time.ticks_us()
    y = held[1].step(x)
    took = time.ticks_diff(time.ticks_us(), start)
    return {"us": took, "t": held[1].t - 1}, [("logits", y)]


HANDLERS = {
    HELLO: hello, STATUS: status, ATTENTION: attention, LOAD_MODEL: load_model,
    FORWARD: forward, TRAIN_STEP: train_step, GET_WEIGHTS: get_weights, BENCH: bench,
    QUANTIZE: quantize, LOAD_QMODEL: load_qmodel, FORWARD_INT8: forward_int8,
    STREAM: stream, RUN: run,
}
"""The messages a request may be (TRANSFER, which carries one of them, is server.py's: the
transfer looks its message up here, so this module does not import it)."""


def _weights_finite(model):
    from ..nn.checks import all_finite

    return all(all_finite(p) for _, p, _ in model.collect_params(False))


def _ulab_version():
    """ulab's version string ("stand-in" for the stand-in), None without ulab."""
    try:
        import ulab
    except ImportError:
        return None
    return ulab.__version__


def _float_bytes():
    """The bytes of ulab's float (4, or 8 on a double-precision build), None without ulab."""
    try:
        from ulab import numpy as np
    except ImportError:
        return None
    return np.zeros(1).itemsize


def _attention_layer(model):
    for layer in model.layers:
        if hasattr(layer, "A_cache"):
            return layer
    raise LinkError(BAD_VALUE, "head field 'attention': the model has no attention layer")
