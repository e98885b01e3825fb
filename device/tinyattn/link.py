"""The device end of the serial link: a server of framed requests on stdin and stdout.

Start it from the raw REPL: `import tinyattn.link; tinyattn.link.serve()`. While it runs,
Ctrl-C is off (micropython.kbd_intr(-1)) and nothing is printed; it goes back to the REPL on
an EXIT message or after `timeout` seconds without a good frame. A request goes
frame (framing.py) -> record (records.py) -> its handler here -> the package's public API.
docs/protocol.md has the frames, the message table and the limits.
"""

import gc
import struct
import sys
import time

import micropython

from . import __version__
from .framing import LinkError, Port, receive
from .records import (decode, encode, expect, field, integers, matrix, only,
                      require_finite)
from .wire import (ACK, ATTENTION, BAD_VALUE, BENCH, BENCH_BUDGET_MS, BYTE_TIMEOUT_MS, CHUNK,
                   EXIT, FORWARD, FORWARD_INT8, GET_WEIGHTS, HELLO, INTERNAL, LOAD_MODEL,
                   LOAD_QMODEL, MAX_HEAD, MAX_MESSAGE, MAX_REPEAT, MAX_SCORES, MAX_SEQ_LEN,
                   MORE, NO_MEMORY, NO_MODEL, PROTOCOL, QUANTIZE, REPLY, STATUS, TOO_BIG,
                   TRAIN_STEP, UNKNOWN_TYPE)



def serve(timeout=30, byte_timeout=BYTE_TIMEOUT_MS / 1000, stdin=None, stdout=None):
    """Answer frames until EXIT or `timeout` seconds without a good frame; return why.

    Ctrl-C is off while serving and restored after, whatever happens. stdin/stdout default
    to sys.stdin.buffer and sys.stdout.buffer (tests pass byte streams, read to their end).
    """
    polled = stdin is None
    port = Port(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, poll=polled)
    session = Session()
    micropython.kbd_intr(-1)
    session.kbd_intr = -1
    try:
        return _loop(port, session, int(timeout * 1000), int(byte_timeout * 1000))
    finally:
        micropython.kbd_intr(3)


def _loop(port, session, silence_ms, byte_ms):
    buf = bytearray(CHUNK)
    pending = None  # (type, seq, bytearray, largest size) of a message arriving in chunks
    while True:
        try:
            frame = receive(port, buf, silence_ms, byte_ms)
        except LinkError as err:
            session.fail(port, err.seq, err.code, str(err))
            continue
        if frame is None:
            return "silence"
        session.frames += 1
        kind, flags, seq, payload = frame
        if pending is not None and (pending[0], pending[1]) != (kind, seq):
            pending = None  # the host gave up on that message and started another
        if flags & MORE or pending is not None:
            if pending is None:
                pending = (kind, seq, bytearray(), session.max_message())
            if len(pending[2]) + len(payload) > pending[3]:
                session.fail(port, seq, TOO_BIG, "message too big: over %d bytes" % pending[3])
                pending = None
                continue
            pending[2].extend(payload)
            if flags & MORE:
                port.send(ACK, seq, struct.pack("<I", len(pending[2])))
                continue
            payload, pending = pending[2], None
        if kind == EXIT:
            port.send(EXIT | REPLY, seq)
            return "exit"
        session.answer(port, kind, seq, payload)
        payload = None
        gc.collect()


class Session:
    """What the host has loaded, the counters, and the handlers of the messages."""

    def __init__(self):
        self.frames = self.errors = 0
        self.kbd_intr = None
        self.model = self.optimizer = self.optimizer_settings = self.qmodel = None
        self.handlers = {
            HELLO: self.hello, STATUS: self.status, ATTENTION: self.attention,
            LOAD_MODEL: self.load_model, FORWARD: self.forward, TRAIN_STEP: self.train_step,
            GET_WEIGHTS: self.get_weights, BENCH: self.bench, QUANTIZE: self.quantize,
            LOAD_QMODEL: self.load_qmodel, FORWARD_INT8: self.forward_int8,
        }

    def max_message(self):
        """The largest request taken: MAX_MESSAGE, or a quarter of the free heap if less."""
        gc.collect()
        return min(MAX_MESSAGE, gc.mem_free() // 4)

    def fail(self, port, seq, code, message):
        self.errors += 1
        port.error(seq, code, message)

    def answer(self, port, kind, seq, payload):
        """Decode the record, run the handler, send its reply or an error frame."""
        handler = self.handlers.get(kind)
        try:
            if handler is None:
                raise LinkError(UNKNOWN_TYPE, "unknown message type 0x%02x" % kind)
            head, arrays = decode(payload)
            payload = None
            reply = encode(*handler(head, arrays))
        except LinkError as err:
            self.fail(port, seq, err.code, str(err))
            return
        except MemoryError:
            arrays = payload = None
            gc.collect()
            self.fail(port, seq, NO_MEMORY, "out of memory: %d bytes free, the request "
                      "needs more; send a smaller batch" % gc.mem_free())
            return
        except ValueError as err:  # the package's own checks of what it was given
            self.fail(port, seq, BAD_VALUE, str(err))
            return
        except Exception as err:  # a bug: the server keeps running whatever a handler raises
            self.fail(port, seq, INTERNAL, "%s: %s" % (type(err).__name__, err))
            return
        port.send(kind | REPLY, seq, reply)

    def need_model(self):
        if self.model is None:
            raise LinkError(NO_MODEL, "no model loaded: send LOAD_MODEL first")
        return self.model

    def need_qmodel(self):
        if self.qmodel is None:
            raise LinkError(NO_MODEL, "no int8 model: send QUANTIZE or LOAD_QMODEL first")
        return self.qmodel

    # ---- handlers: (head, arrays) -> (head, [(name, array) or (name, buf, code, shape)]) ----
    def hello(self, head, arrays):
        only(head, ())
        expect(arrays, ())
        impl = sys.implementation
        gc.collect()
        return {
            "protocol": PROTOCOL, "tinyattn": __version__,
            "micropython": "%d.%d.%d" % impl.version[:3],
            "machine": getattr(impl, "_machine", sys.platform), "platform": sys.platform,
            "ulab": _ulab_version(), "mpy": getattr(impl, "_mpy", None),
            "free": gc.mem_free(), "chunk": CHUNK, "max_message": self.max_message(),
            "max_head": MAX_HEAD,
        }, ()

    def status(self, head, arrays):
        only(head, ())
        expect(arrays, ())
        return {
            "kbd_intr": self.kbd_intr, "frames": self.frames, "errors": self.errors,
            "model": self.model is not None, "qmodel": self.qmodel is not None,
            "free": gc.mem_free(),
        }, ()

    def attention(self, head, arrays):
        """One Attention forward with the weights sent; y and optionally the weights A."""
        from .attention import Attention

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
            _shape(arrays, name, (E, E) if name[0] == "W" else (E,))
        rows, cols = _shape(arrays, "x", None, 2)
        if cols != E or rows % S or rows * H * S > MAX_SCORES:
            raise LinkError(BAD_VALUE, "x must be (B*S, E) = (B*%d, %d) with B*H*S*S at most "
                            "%d, got %r" % (S, E, MAX_SCORES, (rows, cols)))
        layer = Attention(E, H, use_bias=bias)
        for name, param, _ in layer.collect_params():
            param[:] = matrix(arrays, name, param.shape)
        x = matrix(arrays, "x")
        start = time.ticks_us()
        y = layer.forward(x, S, causal=causal)
        took = time.ticks_diff(time.ticks_us(), start)
        return {"us": took}, [("y", y), ("A", layer.A_cache)] if maps else [("y", y)]

    def load_model(self, head, arrays):
        """A Sequential from its config and float32 parameters (named as collect_params)."""
        from .store import check_arrays, model_from

        only(head, ("config",))
        config = field(head, "config", "list")
        shapes = dict((name, shape if code == "f" else code)
                      for name, (code, shape, _) in arrays.items())
        check_arrays(config, shapes)  # a request refused leaves the loaded model
        for name in arrays:
            require_finite(arrays, name)
        for i, entry in enumerate(config):
            if entry[0] == "SelfAttention" and entry[3] > MAX_SEQ_LEN:
                raise LinkError(BAD_VALUE, "config entry %d: seq_len %r; at most %d over the "
                                "link" % (i, entry[3], MAX_SEQ_LEN))
        self.model = self.optimizer = self.qmodel = None
        gc.collect()
        self.model = model_from(config, shapes, lambda name: matrix(arrays, name))
        return {"params": self.model.num_params()}, ()

    def forward(self, head, arrays):
        """Logits of a batch; the first attention layer's weights when asked."""
        only(head, ("attention",))
        maps = field(head, "attention", "bool", False)
        model = self.need_model()
        expect(arrays, ("x",))
        x = matrix(arrays, "x")
        attention = _attention_layer(model) if maps else None
        start = time.ticks_us()
        logits = model.forward(x)
        took = time.ticks_diff(time.ticks_us(), start)
        out = [("logits", logits)]
        if attention is not None:
            out.append(("attention", attention.A_cache))
        return {"us": took}, out

    def train_step(self, head, arrays):
        """One optimizer step on a batch; the optimizer (and its state) lives until reload.

        A step that fails (a non-finite loss or gradient) leaves the weights as they were;
        one whose update is not finite unloads the model rather than keep broken weights.
        """
        from .model import train_step
        from .optim import SGD, Adam

        only(head, ("optimizer", "lr"))
        kind = field(head, "optimizer", "str", "sgd")
        if kind not in ("sgd", "adam"):
            raise LinkError(BAD_VALUE, "head field 'optimizer' must be 'sgd' or 'adam', got %r"
                            % (kind,))
        lr = field(head, "lr", "number", 0.01)  # the optimizer checks its range
        model = self.need_model()
        expect(arrays, ("x", "labels"))
        x = matrix(arrays, "x")
        labels, _, shape = integers(arrays, "labels", "i")
        if len(shape) != 1:
            raise LinkError(BAD_VALUE, "array labels must be 1-D, got shape %r" % (shape,))
        if self.optimizer is None or (kind, lr) != self.optimizer_settings:
            make = SGD if kind == "sgd" else Adam
            self.optimizer = make(model.collect_params(), lr=lr)
            self.optimizer_settings = (kind, lr)
        start = time.ticks_us()
        try:
            loss = train_step(model, self.optimizer, x, labels)
        except ValueError:
            if not _weights_finite(model):
                self.model = self.optimizer = None
            raise
        return {"loss": loss, "us": time.ticks_diff(time.ticks_us(), start)}, ()

    def get_weights(self, head, arrays):
        only(head, ())
        expect(arrays, ())
        model = self.need_model()
        return {"config": model.config()}, [(name, p) for name, p, _ in model.collect_params()]

    def bench(self, head, arrays):
        """Median microseconds per forward of a batch of zeros through the loaded models: a
        warm-up call, then `repeat` calls, fewer when they take over BENCH_BUDGET_MS."""
        from ulab import numpy as np

        only(head, ("batch", "repeat"))
        batch = field(head, "batch", "int", 16, low=1, high=MAX_MESSAGE // 4)
        repeat = field(head, "repeat", "int", 3, low=1, high=MAX_REPEAT)
        expect(arrays, ())
        model = self.need_model()
        first = model.layers[0]
        if not hasattr(first, "in_features"):
            raise LinkError(BAD_VALUE, "BENCH needs a model whose first layer is Dense")
        x = np.zeros((batch, first.in_features))
        result = {"batch": batch, "repeat": repeat}
        runs = (("float_us", model.forward),) if self.qmodel is None else \
            (("float_us", model.forward), ("int8_us", self.qmodel.forward))
        for name, run in runs:
            result[name] = _median_us(lambda: run(x), repeat)
        gc.collect()
        result["free"] = gc.mem_free()
        return result, ()

    def quantize(self, head, arrays):
        """Quantize the loaded model with a calibration batch; reply the int8 model."""
        from .quant import quantize

        only(head, ())
        model = self.need_model()
        expect(arrays, ("x",))
        self.qmodel = quantize(model, matrix(arrays, "x"))
        return _qmodel_record(self.qmodel)

    def load_qmodel(self, head, arrays):
        """An int8 model from its layer descriptions and integer arrays (as QUANTIZE replies)."""
        from .qcheck import qmodel_from

        only(head, ("layers",))
        layers = field(head, "layers", "list")
        buffers = {}
        for name in arrays:
            buffers[name] = integers(arrays, name)
        self.qmodel = qmodel_from(layers, buffers)
        return _qmodel_record(self.qmodel)

    def forward_int8(self, head, arrays):
        """The int8 model's integer output (int8, or int32 accumulators) for int8 input x."""
        only(head, ())
        qmodel = self.need_qmodel()
        expect(arrays, ("x",))
        x, _, shape = integers(arrays, "x", "b")
        rows, cols = _shape(arrays, "x", None, 2)
        start = time.ticks_us()
        y, rows, cols = qmodel.forward_int(x, rows, cols)
        took = time.ticks_diff(time.ticks_us(), start)
        return {"rows": rows, "cols": cols, "us": took}, [("y", y, _typecode(y), (rows, cols))]


def _shape(arrays, name, shape, ndim=None):
    """The shape of array `name`, checked against `shape` (or its number of dimensions)."""
    got = arrays[name][1]
    if (shape is not None and got != shape) or (ndim is not None and len(got) != ndim):
        raise LinkError(BAD_VALUE, "array %s must have shape %s, got %r"
                        % (name, shape if shape else "of %d dimensions" % ndim, got))
    return got


def _qmodel_record(qmodel):
    entries = []
    for i, layer in enumerate(qmodel.layers):
        entries += layer.arrays("%d." % i)
    return {"layers": [layer.spec() for layer in qmodel.layers]}, entries


def _median_us(call, repeat):
    gc.collect()
    call()
    times = []
    budget = time.ticks_add(time.ticks_ms(), BENCH_BUDGET_MS)
    for _ in range(repeat):
        start = time.ticks_us()
        call()
        times.append(time.ticks_diff(time.ticks_us(), start))
        if time.ticks_diff(budget, time.ticks_ms()) < 0:
            break
    times.sort()
    return times[len(times) // 2]


def _typecode(buffer):
    """The typecode of an integer buffer (MicroPython's array.array does not say)."""
    if isinstance(buffer, bytearray):
        return "B"
    size = len(bytes(buffer)) // max(1, len(buffer))
    return {1: "b", 2: "h", 4: "i"}[size]


def _weights_finite(model):
    from .shapes import all_finite

    return all(all_finite(p) for _, p, _ in model.collect_params())


def _ulab_version():
    """ulab's version string ("stand-in" for the stand-in), None without ulab."""
    try:
        import ulab
    except ImportError:
        return None
    return ulab.__version__


def _attention_layer(model):
    for layer in model.layers:
        if hasattr(layer, "A_cache"):
            return layer
    raise LinkError(BAD_VALUE, "head field 'attention': the model has no attention layer")
