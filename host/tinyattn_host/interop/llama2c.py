"""llama2.c's legacy checkpoint (`run.c`'s `model.bin`) to and from tinyattn model files.

The format (little-endian; llama2.c's export.py `legacy_export`, read by run.c's
`memory_map_weights`): a header of 7 int32, dim, hidden_dim, n_layers, n_heads, n_kv_heads,
vocab_size (negative: the classifier has its own weights), seq_len; then float32 tensors, each
layer's stacked, in this order:

    token_embedding (vocab, dim)         rms_att (L, dim)
    wq (L, H*D, dim)   wk (L, Hkv*D, dim)   wv (L, Hkv*D, dim)   wo (L, dim, H*D)
    rms_ffn (L, dim)   w1 (L, hidden, dim)  w2 (L, dim, hidden)  w3 (L, hidden, dim)
    rms_final (dim,)   freq_cis_real (seq_len, D/2)   freq_cis_imag (seq_len, D/2)
    wcls (vocab, dim), only when vocab_size < 0

run.c skips the two freq_cis tables (it computes the rotary angles itself). A model imported
here keeps them as arrays named "host.*", which the device does not load (store.py), so that
export writes the very bytes it read; a model without them (trained on the board) gets them
as export.py computes them (rope_tables: within a float32 bit of torch's).
"""

import os
import struct

import numpy as np

from ..errors import InputError

HEADER = struct.Struct("<7i")
FIELDS = ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len")
EPS = 1e-5  # run.c's rmsnorm
TABLES = ("host.freq_cis_real", "host.freq_cis_imag")


class Llama2cError(InputError):
    """The file is not a llama2.c checkpoint this reader can take; the message says why."""


def _layer_tensors(c):
    """[(name in the file, tinyattn parameter of layer i (None: a whole-model one), shape of
    one layer's part)] in run.c's order, without the tables and wcls."""
    E, F, D = c["dim"], c["hidden_dim"], c["dim"] // c["n_heads"]
    H, K = c["n_heads"] * D, c["n_kv_heads"] * D
    return [("rms_att", "attention_norm.gamma", (E,)), ("wq", "attention.wq", (H, E)),
            ("wk", "attention.wk", (K, E)), ("wv", "attention.wv", (K, E)),
            ("wo", "attention.wo", (E, H)), ("rms_ffn", "ffn_norm.gamma", (E,)),
            ("w1", "feed_forward.w1", (F, E)), ("w2", "feed_forward.w2", (E, F)),
            ("w3", "feed_forward.w3", (F, E))]


def model_config(c):
    """The tinyattn config of a llama2.c header: Embedding, a DecoderBlock a layer (llama2.c's
    rotary pairs), the final RMSNorm and the classifier (tied: the embedding's weights)."""
    E, V = c["dim"], c["vocab_size"]
    block = ["DecoderBlock", E, c["n_heads"], c["n_kv_heads"], c["hidden_dim"], c["seq_len"],
             EPS, "pairs", 10000.0]
    return ([["Embedding", V, E]] + [list(block) for _ in range(c["n_layers"])]
            + [["RMSNorm", E, EPS], ["Classifier", E, V, c["shared"]]])


def read_checkpoint(path):
    """(header dict with "shared", {tinyattn name: float32 array}) of a llama2.c model.bin;
    Llama2cError naming the file and what is wrong."""
    path = os.fspath(path)
    data = open(path, "rb").read()
    if len(data) < HEADER.size:
        raise Llama2cError("%s is %d bytes: too short for llama2.c's 28-byte header"
                           % (path, len(data)))
    c = dict(zip(FIELDS, HEADER.unpack_from(data)))
    c["shared"] = c["vocab_size"] > 0
    c["vocab_size"] = abs(c["vocab_size"])
    _check_header(path, c)
    expected = HEADER.size + 4 * _floats(c)
    if len(data) != expected:
        raise Llama2cError("%s is %d bytes; a llama2.c checkpoint of this header (%s) is %d"
                           % (path, len(data), _describe(c), expected))
    floats = np.frombuffer(data, "<f4", offset=HEADER.size)
    arrays, pos = {}, 0

    def take(shape):
        nonlocal pos
        n = int(np.prod(shape))
        pos += n
        return floats[pos - n:pos].reshape(shape).astype(np.float32)

    arrays["0.W"] = take((c["vocab_size"], c["dim"]))
    L = c["n_layers"]
    for _, name, shape in _layer_tensors(c):
        stacked = take((L,) + shape)
        for i in range(L):
            arrays["%d.%s" % (i + 1, name)] = stacked[i]
    arrays["%d.gamma" % (L + 1)] = take((c["dim"],))
    half = (c["seq_len"], c["dim"] // c["n_heads"] // 2)
    arrays[TABLES[0]], arrays[TABLES[1]] = take(half), take(half)
    if not c["shared"]:
        arrays["%d.W" % (L + 2)] = take((c["vocab_size"], c["dim"]))
    bad = [name for name, a in arrays.items() if not np.all(np.isfinite(a))]
    if bad:
        raise Llama2cError("%s: tensor %s holds NaN or infinity" % (path, bad[0]))
    return c, arrays


def write_checkpoint(path, config, arrays):
    """Write a model of model_config's shape (its config list and {name: array}) as a llama2.c
    checkpoint; the tables are the model's "host.*" arrays, or export.py's."""
    c = header_of(config)
    L = c["n_layers"]
    parts = [HEADER.pack(*[c[f] if f != "vocab_size" else
                           (c[f] if c["shared"] else -c[f]) for f in FIELDS])]

    def put(a, shape):
        a = np.asarray(a, dtype=np.float32)
        if a.shape != shape:
            raise Llama2cError("array of shape %r where %r belongs" % (a.shape, shape))
        parts.append(a.astype("<f4").tobytes())

    put(arrays["0.W"], (c["vocab_size"], c["dim"]))
    for _, name, shape in _layer_tensors(c):
        for i in range(L):
            put(arrays["%d.%s" % (i + 1, name)], shape)
    put(arrays["%d.gamma" % (L + 1)], (c["dim"],))
    D = c["dim"] // c["n_heads"]
    computed = rope_tables(D, c["seq_len"])
    for name, table in zip(TABLES, computed):
        put(arrays.get(name, table), table.shape)
    if not c["shared"]:
        put(arrays["%d.W" % (L + 2)], (c["vocab_size"], c["dim"]))
    tmp = os.fspath(path) + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"".join(parts))
    os.replace(tmp, path)
    return c


def header_of(config):
    """The llama2.c header of a tinyattn config; Llama2cError for a model llama2.c cannot run
    (another layer sequence, blocks that differ, Hugging Face's rotary halves)."""
    kinds = [entry[0] for entry in config] if isinstance(config, list) else []
    if (len(kinds) < 4 or kinds[0] != "Embedding" or kinds[-2:] != ["RMSNorm", "Classifier"]
            or any(k != "DecoderBlock" for k in kinds[1:-2])):
        raise Llama2cError("llama2.c runs Embedding, DecoderBlock..., RMSNorm, Classifier; "
                           "this model is %s" % ", ".join(map(str, kinds)))
    blocks = config[1:-2]
    V, E = config[0][1:3]
    dim, H, Hkv, F, S = blocks[0][1:6]
    for block in blocks:
        rest = list(block[6:]) + [EPS, "pairs", 10000.0][len(block) - 6:]
        if block[1:6] != blocks[0][1:6] or rest != [EPS, "pairs", 10000.0]:
            raise Llama2cError("llama2.c needs equal blocks with eps 1e-5, rotary pairs and "
                               "theta 10000; got %r" % (block,))
    tied = config[-1][3] if len(config[-1]) > 3 else False
    if config[-1][1:3] != [E, V] or config[-2][1] != E or dim != E:
        raise Llama2cError("the embedding, blocks, norm and classifier sizes disagree: %r"
                           % (config,))
    return {"dim": E, "hidden_dim": F, "n_layers": len(blocks), "n_heads": H,
            "n_kv_heads": Hkv, "vocab_size": V, "seq_len": S, "shared": bool(tied)}


def rope_tables(head_size, seq_len):
    """export.py's freq_cis_real and freq_cis_imag, (seq_len, head_size/2) float32: cos and
    sin of pos * 10000^(-2i/head_size), the frequencies and angles in float32 as torch makes
    them, cos and sin rounded from float64 (torch's own float32 cos and sin may differ in the
    last bit)."""
    k = np.arange(0, head_size, 2)[:head_size // 2].astype(np.float32) / np.float32(head_size)
    freqs = np.float32(1.0) / np.float32(10000.0) ** k
    angles = np.outer(np.arange(seq_len, dtype=np.float32), freqs).astype(np.float64)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def _floats(c):
    E, V, L = c["dim"], c["vocab_size"], c["n_layers"]
    per_layer = sum(int(np.prod(shape)) for _, _, shape in _layer_tensors(c))
    D = E // c["n_heads"]
    return V * E * (1 if c["shared"] else 2) + L * per_layer + E + c["seq_len"] * D


def _check_header(path, c):
    for name in FIELDS:
        if c[name] < 1:
            raise Llama2cError("%s: header %s is %d; a llama2.c checkpoint has it >= 1 (%s)"
                               % (path, name, c[name], _describe(c)))
    if c["dim"] % c["n_heads"] or (c["dim"] // c["n_heads"]) % 2:
        raise Llama2cError("%s: n_heads %d does not split dim %d into even head sizes"
                           % (path, c["n_heads"], c["dim"]))
    if c["n_heads"] % c["n_kv_heads"]:
        raise Llama2cError("%s: n_kv_heads %d does not divide n_heads %d"
                           % (path, c["n_kv_heads"], c["n_heads"]))
    if c["dim"] > 65536 or c["hidden_dim"] > 1 << 20 or c["n_layers"] > 4096 or \
            c["vocab_size"] > 1 << 20 or c["seq_len"] > 1 << 20:
        raise Llama2cError("%s: header %s is not a llama2.c model's" % (path, _describe(c)))


def _describe(c):
    return ", ".join("%s %d" % (name, c[name]) for name in FIELDS) + (
        ", shared classifier" if c.get("shared") else "")
