"""Float64 NumPy reference of LayerNorm, the learned positional embedding, GELU (erf form)
and PyTorch's TransformerEncoderLayer, forward and hand-written backward.

Layout is the device's: B sequences of S tokens are (B*S, E), one token a row. Parameters of
an encoder layer are named as on the device: "self_attn.Wq" ... "self_attn.bo", "linear1.W",
"linear1.b", "linear2.W", "linear2.b", "norm1.gamma", "norm1.beta", "norm2.gamma",
"norm2.beta" (in a Sequential, each behind "<layer index>.").
"""

from math import erf

import numpy as np

from . import int8_encoder
from .attention import ATTENTION_PARAMS, attention_backward, attention_forward
from .attention import TORCH as ATTENTION_TORCH
from .kinds import KINDS, declare
from .layers import activation_backward, activation_forward, dense_backward, dense_forward
FF_ACTIVATIONS = ("relu", "gelu")
_erf = np.vectorize(erf, otypes=[np.float64])


# ---- LayerNorm -----------------------------------------------------------------------------
def layernorm_forward(x, gamma, beta, eps=1e-5):
    """y = gamma (x - mean) / sqrt(var + eps) + beta per row (biased variance); (y, cache)."""
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    xhat = (x - mean) * inv
    return xhat * gamma + beta, (xhat, inv, gamma)


def layernorm_backward(grad_out, cache):
    """(dx, dgamma, dbeta) of layernorm_forward."""
    xhat, inv, gamma = cache
    dxhat = grad_out * gamma
    dx = inv * (dxhat - dxhat.mean(axis=1, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
    return dx, (grad_out * xhat).sum(axis=0), grad_out.sum(axis=0)


# ---- positional embedding -----------------------------------------------------------------
def positional_forward(x, P):
    """x (B*S, E) plus P (S, E) on every sequence."""
    S = P.shape[0]
    return x + np.tile(P, (x.shape[0] // S, 1))


def positional_backward(grad_out, seq_len):
    """(dx, dP): dx = grad_out, dP = the sum of grad_out over the sequences."""
    rows, E = grad_out.shape
    return grad_out, grad_out.reshape(rows // seq_len, seq_len, E).sum(axis=0)


# ---- GELU, erf form (PyTorch's default) ---------------------------------------------------
def gelu_forward(x):
    """x Phi(x) = x/2 (1 + erf(x / sqrt(2)))."""
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def gelu_backward(grad_out, x):
    """grad_out (Phi(x) + x phi(x)), phi the standard normal density."""
    phi = np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)
    return grad_out * (0.5 * (1.0 + _erf(x / np.sqrt(2.0))) + x * phi)


def ff_activation_forward(x, kind):
    """The feed-forward activation: relu, or gelu in its erf form."""
    if kind == "gelu":
        return gelu_forward(x)
    if kind == "relu":
        return activation_forward(x, "relu")
    raise ValueError("activation must be one of %s, got %r" % (FF_ACTIVATIONS, kind))


def ff_activation_backward(grad_out, x, kind):
    """Backward of ff_activation_forward."""
    return gelu_backward(grad_out, x) if kind == "gelu" else activation_backward(grad_out, x, "relu")


# ---- TransformerEncoderLayer --------------------------------------------------------------
def encoder_forward(x, p, num_heads, seq_len, activation="relu", norm_first=False, eps=1e-5,
                    mask=None, causal=False, dropout=0.0, keeps=None, num_kv_heads=None):
    """PyTorch's TransformerEncoderLayer; returns (y, cache).

    Dropout (training) from given keep masks, as the device drew them: keeps = {"attn":
    (B*H*S, S) for the attention weights, "drop1": after the attention block, "ff": after
    the activation (B*S, F), "drop2": after linear2}, each kept value scaled by 1/(1 -
    dropout); keeps None: no dropout (inference).

    norm_first=False: h = norm1(x + sa(x)), y = norm2(h + ff(h)).
    norm_first=True:  h = x + sa(norm1(x)), y = h + ff(norm2(h)).
    sa is self-attention (mask: (B, S), 0 = padding key; causal), ff(z) = linear2(act(linear1(z))).
    """
    attn_p = {n: p.get("self_attn." + n) for n in ATTENTION_PARAMS}
    c = {"activation": activation, "norm_first": norm_first, "drops": {}}

    def drop(name, z):
        if keeps is None:
            return z
        c["drops"][name] = keeps[name] / (1.0 - dropout)
        return z * c["drops"][name]

    def sa(z):
        a, c["attn"] = attention_forward(
            z, attn_p, num_heads, seq_len, mask=mask, causal=causal,
            keep=None if keeps is None else keeps["attn"], dropout=dropout,
            num_kv_heads=num_kv_heads)
        return drop("drop1", a)

    def ff(z):
        c["ff_in"] = z
        c["u"] = dense_forward(z, p["linear1.W"], p["linear1.b"])
        c["act"] = drop("ff", ff_activation_forward(c["u"], activation))
        return drop("drop2", dense_forward(c["act"], p["linear2.W"], p["linear2.b"]))

    def norm(i, z):
        out, c["norm%d" % i] = layernorm_forward(z, p["norm%d.gamma" % i], p["norm%d.beta" % i], eps)
        return out

    if norm_first:
        h = x + sa(norm(1, x))
        return h + ff(norm(2, h)), c
    h = norm(1, x + sa(x))
    return norm(2, h + ff(h)), c


def encoder_backward(grad_out, p, cache):
    """(dx, grads) of encoder_forward; grads are named as the device names the parameters
    ("self_attn.Wq", ..., "norm2.beta")."""
    attn_p = {n: p.get("self_attn." + n) for n in ATTENTION_PARAMS}
    grads = {}
    drops = cache["drops"]

    def undrop(name, g):
        return g * drops[name] if name in drops else g

    def sa_back(g):
        d = attention_backward(undrop("drop1", g), attn_p, cache["attn"])
        for n in ATTENTION_PARAMS:
            if d["d" + n] is not None:
                grads["self_attn." + n] = d["d" + n]
        return d["dx"]

    def ff_back(g):
        dact, grads["linear2.W"], grads["linear2.b"] = dense_backward(
            undrop("drop2", g), cache["act"], p["linear2.W"], p["linear2.b"])
        du = ff_activation_backward(undrop("ff", dact), cache["u"], cache["activation"])
        dz, grads["linear1.W"], grads["linear1.b"] = dense_backward(
            du, cache["ff_in"], p["linear1.W"], p["linear1.b"])
        return dz

    def norm_back(i, g):
        dz, grads["norm%d.gamma" % i], grads["norm%d.beta" % i] = layernorm_backward(
            g, cache["norm%d" % i])
        return dz

    if cache["norm_first"]:
        dh = grad_out + norm_back(2, ff_back(grad_out))
        return dh + norm_back(1, sa_back(dh)), grads
    d = norm_back(2, grad_out)
    dh = norm_back(1, d + ff_back(d))
    return dh + sa_back(dh), grads


# ---- the kinds of this module (reference/kinds.py) ------------------------------------------
def _encoder_forward(spec, p, x, mask=None, keeps=None):
    _, _, H, _, dropout, act, norm_first, eps, S, causal = spec[:10]
    return encoder_forward(x, p, H, S, act, norm_first, eps, mask=mask, causal=causal,
                           dropout=dropout if keeps else 0.0, keeps=keeps,
                           num_kv_heads=spec[10] if len(spec) > 10 else None)


def _layernorm_backward(spec, p, cache, grad_out):
    dx, dg, db = layernorm_backward(grad_out, cache)
    return dx, {"gamma": dg, "beta": db}


def _positional_backward(spec, p, seq_len, grad_out):
    dx, dP = positional_backward(grad_out, seq_len)
    return dx, {"P": dP}


NORM_TORCH = {"weight": ["gamma"], "bias": ["beta"]}  # nn.LayerNorm's names


def _parts(**tables):
    """The PyTorch names of a layer made of parts: each part's names under "<part>."."""
    return {"%s.%s" % (part, key): ["%s.%s" % (part, n) for n in names]
            for part, table in tables.items() for key, names in table.items()}


declare("LayerNorm", lambda spec, p, x: layernorm_forward(x, p["gamma"], p["beta"], spec[2]),
        _layernorm_backward, torch=NORM_TORCH,
        int8=(int8_encoder.norm_layer, int8_encoder.norm_run),
        quantize="kinds.quantize_layernorm")
declare("PositionalEmbedding", lambda spec, p, x: (positional_forward(x, p["P"]), spec[1]),
        _positional_backward, torch={"": ["P"]},
        int8=(int8_encoder.positional_layer, int8_encoder.positional_run),
        quantize="kinds.quantize_positional")
declare("Gelu", lambda spec, p, x: (gelu_forward(x), x),
        lambda spec, p, x, grad_out: (gelu_backward(grad_out, x), {}), int8_as="Activation",
        quantize="kinds.quantize_gelu")
declare("TransformerEncoderLayer", _encoder_forward,
        lambda spec, p, cache, grad_out: encoder_backward(grad_out, p, cache),
        torch=_parts(self_attn=ATTENTION_TORCH, linear1=KINDS["Dense"].torch,
                     linear2=KINDS["Dense"].torch, norm1=NORM_TORCH, norm2=NORM_TORCH),
        int8=(int8_encoder.encoder_layer_of, int8_encoder.encoder_run),
        quantize="kinds.quantize_encoder", calibrate="encoder.encoder_stats")
