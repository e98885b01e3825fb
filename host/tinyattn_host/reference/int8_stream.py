"""NumPy reference of the int8 stream (device/tinyattn/int8/stream.py), bit for bit: a causal
int8 model (reference.sequential.int8_layers) one token at a time, a window of W tokens.

Per token t, each layer as its kind's stream role says (the device's declaration, STREAM):
PositionalEmbedding ("position") adds row t of its table; each encoder layer projects the new
row's Q, K and V, keeps K and V (int8) as the last W tokens' (the oldest leaves), and its
query attends to the kept keys (int8.softmax over them, no causal mask: every kept key came
before it); GlobalAvgPool averages its last W input rows (the multiplier of that many kept
tokens). Other kinds run on the one row as in int8_forward.
"""

import numpy as np

from . import int8_attend
from . import int8
from . import int8_encoder as qref
from .kinds import stream_role
from .sequential import _int8 as int8_kind


class Int8Stream:
    """step(xq) -> the last layer's output (1, out) for one int8 frame (F,) or (1, F)."""

    def __init__(self, layers, window):
        self.layers, self.window = layers, window
        self.reset()

    def reset(self):
        self.t = 0
        self.kept = [[] for _ in self.layers]  # per layer: its last W (K, V) or pool rows

    def step(self, xq):
        x = np.asarray(xq, dtype=np.int64).reshape(1, -1)
        t = self.t
        for i, layer in enumerate(self.layers):
            kind = layer["kind"]
            does = stream_role(kind)
            if does == "skip":
                continue
            if does == "position":
                if t >= layer["P"].shape[0]:
                    raise ValueError("the positional table has %d rows" % layer["P"].shape[0])
                x = qref.add(x, layer["P"][t:t + 1], layer["mults"])
            elif does == "cache":
                x = qref.encoder_layer(x, layer, 1, attend=self._attend(layer, self.kept[i]))["y"]
            elif does == "pool":
                rows = self._keep(self.kept[i], x[0])
                x = int8.masked_pool(np.array(rows), len(rows), np.ones((1, len(rows))),
                                     layer["by_count"])
            else:
                x = int8_kind(kind)[1](x, layer)
        self.t = t + 1
        return x

    def _keep(self, rows, item):
        rows.append(item)
        del rows[:-self.window]
        return rows

    def _attend(self, layer, kept):
        a = layer["self_attn"]
        E, H = a["E"], a["H"]

        def attend(z):
            out = {}
            for n in "qkv":
                out[n.upper()] = int8.requantize(int8.matmul_xwt(z, a["W" + n], a.get("b" + n)),
                                                 a["mult_" + n])
            self._keep(kept, (out["K"][0], out["V"][0]))
            K = np.array([k for k, _ in kept])
            V = np.array([v for _, v in kept])
            ctx = int8_attend.attend(out["Q"], K, V, 1, H, a["mult_score"], a["mult_ctx"],
                                     kv_len=len(kept), num_kv_heads=a.get("H_kv") or H,
                                     uniform=True)["ctx"]
            out["acc"], out["y"] = int8.dense(ctx, {"W": a["Wo"], "b": a.get("bo"),
                                                    "mult": a.get("mult_out")})
            return out

        return attend
