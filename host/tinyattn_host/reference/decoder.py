"""Float64 NumPy reference of a Llama-style decoder: Embedding, RMSNorm, rotary positions,
SwiGLU, DecoderBlock (pre-norm, grouped-query causal attention: sdpa.py's), Classifier, and a whole
language model (`lm_forward`, `lm_backward`; the classifier may be tied to the embedding).

Each forward keeps what its backward needs; backward passes are written out by hand (tests
check them against finite differences). Rows are the positions of one sequence; `start` is the
position of the first row (a cache's length when decoding).
"""

import numpy as np

from . import int8_decoder
from .kinds import declare, kind
from .sdpa import sdpa_backward, sdpa_forward


# ---- the pieces ------------------------------------------------------------------------
def rmsnorm_forward(x, gamma, eps):
    """y = gamma * x / sqrt(mean(x^2) + eps), each row."""
    inv = 1.0 / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + eps)
    return x * inv * gamma, (x, inv)


def rmsnorm_backward(grad_out, gamma, cache):
    """(dx, dgamma): dx = inv (d - xhat mean(d xhat)), d = grad_out gamma."""
    x, inv = cache
    xhat = x * inv
    d = grad_out * gamma
    return inv * (d - xhat * np.mean(d * xhat, axis=1, keepdims=True)), (grad_out * xhat).sum(0)


def rope_angles(positions, head_size, theta=10000.0):
    """(cos, sin), (len(positions), head_size / 2): position p, pair i turns by
    p * theta^(-2i / head_size)."""
    freqs = theta ** (-np.arange(0, head_size, 2) / head_size)
    angles = np.outer(np.asarray(positions, dtype=np.float64), freqs)
    return np.cos(angles), np.sin(angles)


def rope(x, heads, cos, sin, style, inverse=False):
    """Each head's pairs of x (rows, heads * D) turned: "pairs" (2i, 2i+1) as llama2.c,
    "half" (i, i + D/2) as Hugging Face. inverse: turned back (the backward)."""
    rows = x.shape[0]
    D = x.shape[1] // heads
    h = x.reshape(rows, heads, D)
    a, b = (h[..., 0::2], h[..., 1::2]) if style == "pairs" else (h[..., :D // 2], h[..., D // 2:])
    c, s = cos[:, None, :], (-sin if inverse else sin)[:, None, :]
    ra, rb = a * c - b * s, a * s + b * c
    out = np.empty_like(h)
    if style == "pairs":
        out[..., 0::2], out[..., 1::2] = ra, rb
    else:
        out[..., :D // 2], out[..., D // 2:] = ra, rb
    return out.reshape(rows, heads * D)


def swiglu_forward(x, w1, w2, w3):
    """w2(silu(w1 x) * w3 x)."""
    a, b = x @ w1.T, x @ w3.T
    s = 1.0 / (1.0 + np.exp(-a))
    return (a * s * b) @ w2.T, (x, a, b, s)


def swiglu_backward(grad_out, w1, w2, w3, cache):
    """(dx, {"w1", "w2", "w3"})."""
    x, a, b, s = cache
    h = a * s * b
    dh = grad_out @ w2
    da = dh * b * s * (1.0 + a * (1.0 - s))
    db = dh * a * s
    return da @ w1 + db @ w3, {"w1": da.T @ x, "w2": grad_out.T @ h, "w3": db.T @ x}


# ---- the decoder block -------------------------------------------------------------------
def block_forward(spec, p, x, start=0):
    """x + attention(norm(x)), then + SwiGLU(norm(.)): spec ["DecoderBlock", E, H, H_kv, F,
    S, eps, rope, theta]."""
    _, E, H, H_kv, F, S, eps, style, theta = spec
    D = E // H
    n1, c1 = rmsnorm_forward(x, p["attention_norm.gamma"], eps)
    cos, sin = rope_angles(range(start, start + x.shape[0]), D, theta)
    q = rope(n1 @ p["attention.wq"].T, H, cos, sin, style)
    k = rope(n1 @ p["attention.wk"].T, H_kv, cos, sin, style)
    v = n1 @ p["attention.wv"].T
    a, attention = sdpa_forward(q, k, v, x.shape[0], H, num_kv_heads=H_kv, causal=True)
    h = x + a @ p["attention.wo"].T
    n2, c2 = rmsnorm_forward(h, p["ffn_norm.gamma"], eps)
    f, c3 = swiglu_forward(n2, *(p["feed_forward." + w] for w in ("w1", "w2", "w3")))
    return h + f, (c1, n1, cos, sin, attention, a, c2, c3)


def block_backward(spec, p, cache, grad_out):
    _, E, H, H_kv, F, S, eps, style, theta = spec
    c1, n1, cos, sin, attention, a, c2, c3 = cache
    ws = [p["feed_forward." + w] for w in ("w1", "w2", "w3")]
    dn2, g = swiglu_backward(grad_out, *ws, c3)
    grads = {"feed_forward." + n: value for n, value in g.items()}
    dh, grads["ffn_norm.gamma"] = rmsnorm_backward(dn2, p["ffn_norm.gamma"], c2)
    dh = dh + grad_out
    grads["attention.wo"] = dh.T @ a
    dq, dk, dv = sdpa_backward(dh @ p["attention.wo"], attention)[:3]
    dq, dk = rope(dq, H, cos, sin, style, True), rope(dk, H_kv, cos, sin, style, True)
    grads["attention.wq"], grads["attention.wk"], grads["attention.wv"] = (
        dq.T @ n1, dk.T @ n1, dv.T @ n1)
    dn1 = dq @ p["attention.wq"] + dk @ p["attention.wk"] + dv @ p["attention.wv"]
    dx, grads["attention_norm.gamma"] = rmsnorm_backward(dn1, p["attention_norm.gamma"], c1)
    return dx + dh, grads


# ---- a whole language model --------------------------------------------------------------
def tied(config, i):
    """Whether config entry i takes the embedding's weights (its kind's tied role)."""
    return kind(config[i][0]).tied(config[i])


def lm_forward(config, params, tokens):
    """(logits (len(tokens), vocab), caches) of an Embedding, DecoderBlock..., RMSNorm,
    Classifier config; a tied classifier takes params["0.W"]."""
    from .kinds import layer_params

    x, caches = np.asarray(tokens), []
    for i, spec in enumerate(config):
        p = layer_params(params, i, spec)
        if tied(config, i):
            p = {"W": params["0.W"]}
        x, cache = kind(spec[0]).forward(spec, p, x)
        caches.append(cache)
    return x, caches


def lm_backward(config, params, caches, grad_out):
    """{name: gradient} of lm_forward; a tied classifier's gradient adds to "0.W"."""
    from .kinds import layer_params

    grads = {}
    for i in range(len(config) - 1, -1, -1):
        spec = config[i]
        p = {"W": params["0.W"]} if tied(config, i) else layer_params(params, i, spec)
        grad_out, g = kind(spec[0]).backward(spec, p, caches[i], grad_out)
        for n, value in g.items():
            name = "0.W" if tied(config, i) else "%d.%s" % (i, n)
            grads[name] = grads.get(name, 0.0) + value
    return grads


def _embedding_backward(spec, p, ids, grad_out):
    dW = np.zeros((spec[1], spec[2]))
    np.add.at(dW, ids, grad_out)
    return None, {"W": dW}


declare("Embedding", lambda spec, p, x: (p["W"][np.asarray(x, dtype=int).reshape(-1)],
                                         np.asarray(x, dtype=int).reshape(-1)),
        _embedding_backward, torch={"weight": ["W"]}, int8_step=int8_decoder.embedding_step,
        quantize="lm.embedding_layer", in_scale=lambda q: q["s_w"], out_scale=lambda q: q["s_w"])
declare("RMSNorm", lambda spec, p, x: rmsnorm_forward(x, p["gamma"], spec[2]),
        lambda spec, p, cache, g: (lambda dx, dg: (dx, {"gamma": dg}))(
            *rmsnorm_backward(g, p["gamma"], cache)), torch={"weight": ["gamma"]},
        int8_step=int8_decoder.rmsnorm_step, quantize="lm.rmsnorm_layer")
declare("SwiGLU", lambda spec, p, x: swiglu_forward(x, p["w1"], p["w2"], p["w3"]),
        lambda spec, p, cache, g: swiglu_backward(g, p["w1"], p["w2"], p["w3"], cache),
        torch={w + ".weight": [w] for w in ("w1", "w2", "w3")})
declare("DecoderBlock", block_forward, block_backward,
        torch=dict([("attention_norm.weight", ["attention_norm.gamma"]),
                    ("ffn_norm.weight", ["ffn_norm.gamma"])]
                   + [("attention.%s.weight" % w, ["attention." + w]) for w in ("wq", "wk", "wv", "wo")]
                   + [("feed_forward.%s.weight" % w, ["feed_forward." + w])
                      for w in ("w1", "w2", "w3")]),
        int8_step=int8_decoder.block_step, quantize="lm.block_layer", calibrate="lm.block_stats")
declare("Classifier", lambda spec, p, x: (x @ p["W"].T, x),
        lambda spec, p, x, g: (g @ p["W"], {"W": g.T @ x}), torch={"weight": ["W"]},
        int8_step=int8_decoder.classifier_step, quantize="lm.classifier",
        calibrate="lm.weights_only", tied=lambda spec: len(spec) > 3 and bool(spec[3]))
