"""The device end of the serial link: binary frames over the REPL's stdin and stdout.

Start it from the raw REPL: `import tinyattn.link; tinyattn.link.serve()`. While it runs,
Ctrl-C is off (micropython.kbd_intr(-1)) and nothing is printed; it goes back to the REPL on
an EXIT message or after `timeout` seconds without a good frame. docs/protocol.md has the
frame layout and the message table.
"""

import array
import gc
import json
import struct
import sys
import time

import micropython

try:
    from binascii import crc32
except ImportError:  # a firmware without binascii.crc32
    crc32 = None

from . import __version__

MAGIC = b"\xa5T"
HEADER = 12  # magic, type u8, flags u8, seq u16, length u16, crc32 u32; little-endian
CHUNK = 192  # the largest frame payload taken: header + chunk fit a UART's 256-byte buffer
REPLY_CHUNK = 1024  # the largest frame payload sent
MORE = 1  # flags: further chunks of this message follow
PROTOCOL = 1

HELLO, STATUS, EXIT, ACK, ERROR = 0x01, 0x02, 0x03, 0x04, 0x05
ATTENTION = 0x10
LOAD_MODEL, FORWARD, TRAIN_STEP, GET_WEIGHTS, BENCH = 0x20, 0x21, 0x22, 0x23, 0x24
QUANTIZE, LOAD_QMODEL, FORWARD_INT8 = 0x30, 0x31, 0x32
REPLY = 0x80  # a reply's type is the request's | REPLY

E_CRC, E_TRUNCATED, E_OVERSIZED, E_TOO_BIG, E_UNKNOWN = 1, 2, 3, 4, 5
E_PAYLOAD, E_VALUE, E_NOT_FINITE, E_MEMORY, E_NO_MODEL, E_INTERNAL = 6, 7, 8, 9, 10, 11

ITEMSIZE = {"f": 4, "b": 1, "B": 1, "h": 2, "i": 4}
_INF = float("inf")


class LinkError(Exception):
    """A request the device answers with an error frame: `code` and a message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# ---- CRC-32 (zlib's), from binascii when the firmware has it ---------------------------
_table = None


def _crc32_table(data, crc=0):
    """CRC-32 with a 256-entry table, for firmware without binascii.crc32."""
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
    crc32 = _crc32_table


# ---- frames ----------------------------------------------------------------------------
class Port:
    """Byte I/O for the link: stdin/stdout binary streams, polled when `poll` is true."""

    def __init__(self, stdin, stdout, poll=True):
        self.stdin, self.stdout = stdin, stdout
        self.poller = None
        if poll:
            import select

            self.poller = select.poll()
            self.poller.register(stdin, select.POLLIN)
        self.one = bytearray(1)
        self.eof = False
        self.header = bytearray(HEADER)

    def byte(self, timeout_ms):
        """The next byte, or -1 after timeout_ms without one (or at the end of the stream)."""
        if self.poller is not None:
            for _ in self.poller.ipoll(timeout_ms):
                break
            else:
                return -1
        if not self.stdin.readinto(self.one):
            self.eof = True
            return -1
        return self.one[0]

    def send(self, kind, seq, payload=b""):
        """Write a message as frames of at most REPLY_CHUNK payload bytes."""
        view = memoryview(payload)
        start = 0
        while True:
            part = view[start:start + REPLY_CHUNK]
            start += len(part)
            flags = MORE if start < len(view) else 0
            head = self.header
            head[0:2] = MAGIC
            struct.pack_into("<BBHH", head, 2, kind, flags, seq, len(part))
            struct.pack_into("<I", head, 8, crc32(part, crc32(memoryview(head)[2:8])))
            self.stdout.write(head)
            self.stdout.write(part)
            if not flags:
                return

    def error(self, seq, code, message):
        self.send(ERROR, seq, bytes([code]) + message.encode()[:200])


def receive(port, buf, silence_ms, byte_ms):
    """The next frame as (type, flags, seq, payload memoryview), None after silence_ms.

    Bytes before the magic are skipped (resynchronisation). A frame that breaks off, is
    longer than CHUNK or fails its CRC raises LinkError, with the seq it claimed as `.seq`.
    """
    deadline = time.ticks_add(time.ticks_ms(), silence_ms)
    previous = -1
    while True:
        left = time.ticks_diff(deadline, time.ticks_ms())
        if left <= 0 or port.eof:
            return None
        byte = port.byte(left)
        if previous == MAGIC[0] and byte == MAGIC[1]:
            break
        previous = byte
    head = port.header
    for i in range(2, HEADER):
        byte = port.byte(byte_ms)
        if byte < 0:
            raise _frame_error(E_TRUNCATED, 0, "truncated frame: the header broke off")
        head[i] = byte
    kind, flags, seq, length, crc = struct.unpack_from("<BBHHI", head, 2)
    if length > CHUNK:
        raise _frame_error(E_OVERSIZED, seq, "frame payload of %d bytes; at most %d, send "
                           "larger messages in chunks" % (length, CHUNK))
    for i in range(length):
        byte = port.byte(byte_ms)
        if byte < 0:
            raise _frame_error(E_TRUNCATED, seq, "truncated frame: %d of %d payload bytes"
                               % (i, length))
        buf[i] = byte
    payload = memoryview(buf)[:length]
    if crc32(payload, crc32(memoryview(head)[2:8])) != crc:
        raise _frame_error(E_CRC, seq, "CRC mismatch: frame dropped")
    return kind, flags, seq, payload


def _frame_error(code, seq, message):
    error = LinkError(code, message)
    error.seq = seq
    return error


# ---- records: a JSON head and the arrays it lists --------------------------------------
def decode(payload):
    """(head, arrays) from a record: u16 head length, JSON head, then the raw arrays.

    head["arrays"] lists [name, typecode, shape]; arrays maps name to (typecode, shape,
    memoryview of its bytes).
    """
    try:
        (size,) = struct.unpack_from("<H", payload, 0)
        head = json.loads(bytes(payload[2:2 + size]))
        offset = 2 + size
        arrays = {}
        for name, code, shape in head.get("arrays", ()):
            nbytes = ITEMSIZE[code]
            for dim in shape:
                nbytes *= dim
            arrays[name] = (code, tuple(shape), payload[offset:offset + nbytes])
            offset += nbytes
    except (ValueError, KeyError, TypeError) as err:
        raise LinkError(E_PAYLOAD, "bad record: %s" % (err,))
    if offset != len(payload):
        raise LinkError(E_PAYLOAD, "record has %d bytes, its head describes %d"
                        % (len(payload), offset))
    return head, arrays


def encode(head, arrays=()):
    """A record from a JSON-able head and arrays: (name, ulab float array) pairs, or
    (name, array.array, typecode) for integers (MicroPython's array has no .typecode)."""
    listed, blobs = [], []
    for entry in arrays:
        name, value = entry[0], entry[1]
        if len(entry) == 3:
            listed.append([name, entry[2], [len(value)]])
            blobs.append(value)
        else:
            listed.append([name, "f", list(value.shape)])
            blobs.append(_float_bytes(value))
    head = dict(head)
    if listed:
        head["arrays"] = listed
    text = json.dumps(head).encode()
    out = bytearray(struct.pack("<H", len(text)))
    out += text
    for blob in blobs:
        out += blob
    return out


def _float_bytes(value):
    if len(value.shape) == 1:
        return array.array("f", value.tolist())
    out = bytearray()
    for row in value:  # a row at a time, as float32 whatever the build's float
        out += array.array("f", row.tolist())
    return out


def matrix(arrays, name, shape=None):
    """The float32 array `name` as a ulab array, checked for shape and finite values."""
    from ulab import numpy as np

    if name not in arrays:
        raise LinkError(E_PAYLOAD, "the request has no array %r" % name)
    code, got, data = arrays[name]
    if code != "f":
        raise LinkError(E_PAYLOAD, "array %s must be float32 ('f'), got %r" % (name, code))
    if shape is not None and got != tuple(shape):
        raise LinkError(E_VALUE, "array %s must have shape %r, got %r" % (name, tuple(shape), got))
    values = array.array("f", bytes(data))  # from a memoryview it would take each byte
    for v in values:
        if v != v or v == _INF or v == -_INF:
            raise LinkError(E_NOT_FINITE, "array %s holds NaN or infinity" % name)
    if len(got) == 1:
        return np.array(values)
    rows, cols = got
    out = np.zeros(got)
    for r in range(rows):
        out[r, :] = np.array(values[r * cols:(r + 1) * cols])
    return out


def integers(arrays, name):
    """The integer array `name` as an array.array (a copy)."""
    if name not in arrays or arrays[name][0] == "f":
        raise LinkError(E_PAYLOAD, "the request has no integer array %r" % name)
    code, _, data = arrays[name]
    return array.array(code, bytes(data))


# ---- the server --------------------------------------------------------------------------
def serve(timeout=30, byte_timeout=0.5, stdin=None, stdout=None):
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
    pending = None  # (type, seq, bytearray) of a message arriving in chunks
    while True:
        try:
            frame = receive(port, buf, silence_ms, byte_ms)
        except LinkError as err:
            session.errors += 1
            port.error(err.seq, err.code, str(err))
            continue
        if frame is None:
            return "silence"
        session.frames += 1
        kind, flags, seq, payload = frame
        if pending is not None and (pending[0], pending[1]) != (kind, seq):
            pending = None  # the host gave up on that message and started another
        if flags & MORE or pending is not None:
            if pending is None:
                pending = (kind, seq, bytearray())
            if len(pending[2]) + len(payload) > session.max_message():
                pending = None
                session.errors += 1
                port.error(seq, E_TOO_BIG, "message too big for the heap: over %d bytes"
                           % session.max_message())
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
    """What the host has loaded, and the handlers of the messages."""

    def __init__(self):
        self.frames = self.errors = 0
        self.kbd_intr = None
        self.model = self.optimizer = self.optimizer_settings = self.qmodel = None
        self.handlers = {
            HELLO: self.hello, STATUS: self.status, ATTENTION: self.attention,
            LOAD_MODEL: self.load_model, FORWARD: self.forward, TRAIN_STEP: self.train_step,
            GET_WEIGHTS: self.get_weights, BENCH: self.bench,
            QUANTIZE: self.quantize, LOAD_QMODEL: self.load_qmodel,
            FORWARD_INT8: self.forward_int8,
        }

    def max_message(self):
        gc.collect()
        return gc.mem_free() // 4

    def answer(self, port, kind, seq, payload):
        handler = self.handlers.get(kind)
        try:
            if handler is None:
                raise LinkError(E_UNKNOWN, "unknown message type 0x%02x" % kind)
            head, arrays = decode(payload)
            payload = None
            reply = encode(*handler(head, arrays))
        except LinkError as err:
            self._fail(port, seq, err.code, str(err))
            return
        except MemoryError:
            arrays = payload = None
            gc.collect()
            self._fail(port, seq, E_MEMORY, "out of memory: %d bytes free, the request "
                       "needs more; send a smaller batch" % gc.mem_free())
            return
        except ValueError as err:
            self._fail(port, seq, E_VALUE, str(err))
            return
        except Exception as err:  # the server keeps running whatever a handler raises
            self._fail(port, seq, E_INTERNAL, "%s: %s" % (type(err).__name__, err))
            return
        port.send(kind | REPLY, seq, reply)

    def _fail(self, port, seq, code, message):
        self.errors += 1
        port.error(seq, code, message)

    # ---- handlers: (head, arrays) -> (head, [(name, value)]) ----------------------------
    def hello(self, head, arrays):
        impl = sys.implementation
        gc.collect()
        return {
            "protocol": PROTOCOL, "tinyattn": __version__,
            "micropython": "%d.%d.%d" % impl.version[:3],
            "machine": getattr(impl, "_machine", sys.platform), "platform": sys.platform,
            "ulab": _ulab_version(), "mpy": getattr(impl, "_mpy", None),
            "free": gc.mem_free(), "chunk": CHUNK, "max_message": self.max_message(),
        }, ()

    def status(self, head, arrays):
        return {
            "kbd_intr": self.kbd_intr, "frames": self.frames, "errors": self.errors,
            "model": self.model is not None, "qmodel": self.qmodel is not None,
            "free": gc.mem_free(),
        }, ()

    def attention(self, head, arrays):
        """One Attention forward with the weights sent; y and optionally the weights A."""
        from .attention import Attention

        E, H, S = head["E"], head["H"], head["S"]
        layer = Attention(E, H, use_bias=head.get("bias", True))
        for name, param, _ in layer.collect_params():
            param[:] = matrix(arrays, name, param.shape)
        x = matrix(arrays, "x")
        start = time.ticks_us()
        y = layer.forward(x, S, causal=head.get("causal", False))
        took = time.ticks_diff(time.ticks_us(), start)
        out = [("y", y)]
        if head.get("attention"):
            out.append(("A", layer.A_cache))
        return {"us": took}, out

    def load_model(self, head, arrays):
        """A Sequential from its config and float32 parameters (named as collect_params)."""
        from .layers import Sequential

        self.model = self.optimizer = None
        gc.collect()
        model = Sequential.from_config(head["config"], seed=0)
        params = model.collect_params()
        expected = sorted(name for name, _, _ in params)
        if sorted(arrays) != expected:
            raise LinkError(E_VALUE, "the model needs arrays %s, got %s"
                            % (expected, sorted(arrays)))
        for name, param, _ in params:
            param[:] = matrix(arrays, name, param.shape)
        self.model = model
        return {"params": model.num_params()}, ()

    def _need_model(self):
        if self.model is None:
            raise LinkError(E_NO_MODEL, "no model loaded: send LOAD_MODEL first")
        return self.model

    def forward(self, head, arrays):
        """Logits of a batch; the first attention layer's weights when asked."""
        model = self._need_model()
        x = matrix(arrays, "x")
        start = time.ticks_us()
        logits = model.forward(x)
        took = time.ticks_diff(time.ticks_us(), start)
        out = [("logits", logits)]
        if head.get("attention"):
            out.append(("attention", _attention_layer(model).A_cache))
        return {"us": took}, out

    def train_step(self, head, arrays):
        """One optimizer step on a batch; the optimizer (and its state) lives until reload."""
        from .model import train_step
        from .optim import SGD, Adam

        model = self._need_model()
        x = matrix(arrays, "x")
        labels = integers(arrays, "labels")
        settings = (head.get("optimizer", "sgd"), head.get("lr", 0.01))
        if self.optimizer is None or settings != self.optimizer_settings:
            kind, lr = settings
            if kind not in ("sgd", "adam"):
                raise LinkError(E_VALUE, "optimizer must be 'sgd' or 'adam', got %r" % kind)
            make = SGD if kind == "sgd" else Adam
            self.optimizer = make(model.collect_params(), lr=lr)
            self.optimizer_settings = settings
        start = time.ticks_us()
        loss = train_step(model, self.optimizer, x, labels)
        return {"loss": loss, "us": time.ticks_diff(time.ticks_us(), start)}, ()

    def get_weights(self, head, arrays):
        model = self._need_model()
        return {"config": model.config()}, [(name, p) for name, p, _ in model.collect_params()]

    def bench(self, head, arrays):
        """Median microseconds per forward of a batch of zeros through the loaded models:
        a warm-up call, then `repeat` calls (at least 3). Taken here: the bench is a mip
        package of its own, which the core does not need."""
        from ulab import numpy as np

        model = self._need_model()
        batch, repeat = head.get("batch", 16), head.get("repeat", 3)
        x = np.zeros((batch, model.layers[0].in_features))
        result = {"batch": batch, "repeat": repeat}
        for name, run in (("float_us", model.forward), ("int8_us", self._int8_runner())):
            if run is None:
                continue
            times = []
            for _ in range(max(3, repeat) + 1):
                gc.collect()
                start = time.ticks_us()
                run(x)
                times.append(time.ticks_diff(time.ticks_us(), start))
            result[name] = sorted(times[1:])[len(times[1:]) // 2]
        gc.collect()
        result["free"] = gc.mem_free()
        return result, ()

    def quantize(self, head, arrays):
        """Quantize the loaded model with a calibration batch; reply the int8 model."""
        from .quant import quantize

        model = self._need_model()
        self.qmodel = None
        gc.collect()
        self.qmodel = quantize(model, matrix(arrays, "x"))
        return self._qmodel_record()

    def load_qmodel(self, head, arrays):
        """An int8 model from its layer specs and integer arrays (as QUANTIZE replies)."""
        from .quant import _KINDS, QSequential

        self.qmodel = None
        gc.collect()
        buffers = {}
        for name in arrays:
            buffers[name] = integers(arrays, name)
        layers = []
        for i, spec in enumerate(head["layers"]):
            if spec.get("kind") not in _KINDS:
                raise LinkError(E_VALUE, "unknown quantized layer kind %r" % spec.get("kind"))
            layers.append(_KINDS[spec["kind"]].from_spec(spec, buffers, "%d." % i))
        self.qmodel = QSequential(layers)
        return self._qmodel_record()

    def _qmodel_record(self):
        listed = []
        for i, layer in enumerate(self.qmodel.layers):
            for entry in layer.arrays("%d." % i):
                listed.append((entry[0], entry[1], _typecode(entry[1])))
        return {"layers": [layer.spec() for layer in self.qmodel.layers]}, listed

    def forward_int8(self, head, arrays):
        """The int8 model's integer output (int8, or int32 accumulators) for int8 input x."""
        if self.qmodel is None:
            raise LinkError(E_NO_MODEL, "no int8 model: send QUANTIZE or LOAD_QMODEL first")
        code, shape, _ = arrays.get("x", ("?", (), None))
        if code != "b" or len(shape) != 2:
            raise LinkError(E_PAYLOAD, "x must be a 2-D int8 array")
        x = integers(arrays, "x")
        start = time.ticks_us()
        y, rows, cols = self.qmodel.forward_int(x, shape[0], shape[1])
        took = time.ticks_diff(time.ticks_us(), start)
        return {"rows": rows, "cols": cols, "us": took}, [("y", y, _typecode(y))]

    def _int8_runner(self):
        return None if self.qmodel is None else self.qmodel.forward


def _typecode(buffer):
    """The typecode of an integer buffer (MicroPython's array.array does not say)."""
    if isinstance(buffer, bytearray):
        return "B"
    size = len(bytes(buffer)) // max(1, len(buffer))
    return {1: "b", 2: "h", 4: "i"}[size]


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
    raise LinkError(E_VALUE, "the model has no attention layer")
