"""The wire and file constants, one table for both ends (docs/protocol.md, store.py).

Plain values and no imports: the device imports this module, and the host loads this same
file (tinyattn_host.protocol, tinyattn_host.modelfile), as mpremote builds both ends of its
commands from one table.
"""

# ---- the serial link ---------------------------------------------------------------------
PROTOCOL = 1
MAGIC = b"\xa5T"
HEADER_FORMAT = "<BBHHI"  # after the magic: type, flags, seq, length, crc32; little-endian
HEADER = 12
CHUNK = 192  # the largest frame payload the device takes: header + chunk fit a 256-byte ring
REPLY_CHUNK = 1024  # the largest frame payload the device sends
MORE = 1  # flags: further chunks of this message follow
REPLY = 0x80  # a reply's type is the request's | REPLY

# limits on what a request may make the device allocate or do (docs/protocol.md, "Limits")
MAX_MESSAGE = 65536  # bytes of a request (less when a quarter of the free heap is less)
MAX_HEAD = 16384  # bytes of a record's JSON head (an int8 encoder layer: ~2.4 KB)
MAX_SEQ_LEN = 256  # the sequences a model sent works on (an attention: S*S scores each)
MAX_SCORES = 1 << 16  # attention weights (B*H*S*S) of one ATTENTION request
MAX_REPEAT = 100  # BENCH calls
BENCH_BUDGET_MS = 2000  # BENCH stops timing after this, whatever `repeat` says
BYTE_TIMEOUT_MS = 500  # a frame whose next byte takes longer is TRUNCATED

HELLO, STATUS, EXIT, ACK, ERROR = 0x01, 0x02, 0x03, 0x04, 0x05
TRANSFER, PART = 0x06, 0x07  # a message over max_message: announced, then in parts (transfer.py)
RECORD = 0x08  # device to host: one JSON record a RUN's function emits, with the RUN's seq
ATTENTION = 0x10
LOAD_MODEL, FORWARD, TRAIN_STEP, GET_WEIGHTS, BENCH = 0x20, 0x21, 0x22, 0x23, 0x24
STREAM = 0x25  # one token of a causal model through its key/value cache (nn/stream.py)
QUANTIZE, LOAD_QMODEL, FORWARD_INT8 = 0x30, 0x31, 0x32
RUN = 0x40  # a function of the package, its records streamed as RECORD frames (run.py)
MESSAGES = {
    HELLO: "HELLO", STATUS: "STATUS", EXIT: "EXIT", ACK: "ACK", ERROR: "ERROR",
    TRANSFER: "TRANSFER", PART: "PART", RECORD: "RECORD", RUN: "RUN",
    ATTENTION: "ATTENTION", LOAD_MODEL: "LOAD_MODEL", FORWARD: "FORWARD",
    TRAIN_STEP: "TRAIN_STEP", GET_WEIGHTS: "GET_WEIGHTS", BENCH: "BENCH",
    QUANTIZE: "QUANTIZE", LOAD_QMODEL: "LOAD_QMODEL", FORWARD_INT8: "FORWARD_INT8",
    STREAM: "STREAM",
}

BAD_CRC, TRUNCATED, OVERSIZED, TOO_BIG, UNKNOWN_TYPE = 1, 2, 3, 4, 5
BAD_PAYLOAD, BAD_VALUE, NOT_FINITE, NO_MEMORY, NO_MODEL, INTERNAL = 6, 7, 8, 9, 10, 11
ERRORS = {
    BAD_CRC: "BAD_CRC", TRUNCATED: "TRUNCATED", OVERSIZED: "OVERSIZED", TOO_BIG: "TOO_BIG",
    UNKNOWN_TYPE: "UNKNOWN_TYPE", BAD_PAYLOAD: "BAD_PAYLOAD", BAD_VALUE: "BAD_VALUE",
    NOT_FINITE: "NOT_FINITE", NO_MEMORY: "NO_MEMORY", NO_MODEL: "NO_MODEL",
    INTERNAL: "INTERNAL",
}

# ---- arrays, on the link and in files: array module typecodes and their sizes ------------
ITEMSIZE = {"f": 4, "b": 1, "B": 1, "h": 2, "i": 4}  # float32, int8, uint8, int16, int32

# ---- the model file (store.py) -------------------------------------------------------------
FILE_MAGIC = b"TINYATTN"
FILE_END = b"END."
FILE_VERSION = 1
FILE_SEQUENTIAL = "sequential"  # the model kinds a file holds: a float Sequential,
FILE_QUANTIZED = "quantized"  # an int8 QSequential
