"""tinyattn.int8.quantize of a language model on the host (device/tinyattn/int8/convert_lm.py):
calibration token ids run through the float64 reference a window at a time, max |.| of every
step of every block, then each int8 layer made as the board makes it, in its float32
(numbers.py): (specs, arrays) that model.model_bytes writes as the board's own file."""

import numpy as np

from ..reference import int8 as ref
from ..reference.decoder import rmsnorm_forward, rope, rope_angles
from ..reference.kinds import device_spec, full_entry, kind as declared, quantizer
from ..reference.sdpa import sdpa_forward
from .calibrate import forward_stats, layer_params
from .layers import activation, dense
from .numbers import add_multipliers, f32, int8_weights, multiplier, over, scale_for, times

WINDOW = 64  # convert_lm.WINDOW
PROJECTIONS = (("wq", "attention.wq"), ("wk", "attention.wk"), ("wv", "attention.wv"),
               ("wo", "attention.wo"), ("w1", "feed_forward.w1"), ("w3", "feed_forward.w3"),
               ("w2", "feed_forward.w2"))




def silu(a):
    return a / (1.0 + np.exp(-a))


def block_stats(spec, p, x, mask=None):
    """(y, {step: max |.|}) of a DecoderBlock on rows x from position 0 (convert_lm's): its
    declaration's calibrate."""
    _, E, H, H_kv, F, S, eps, style, theta = spec
    st = {}
    a = rmsnorm_forward(x, p["attention_norm.gamma"], eps)[0]
    st["attention_norm"] = np.abs(a).max()
    cos, sin = rope_angles(range(x.shape[0]), E // H, theta)
    qp, kp = a @ p["attention.wq"].T, a @ p["attention.wk"].T
    q, k = rope(qp, H, cos, sin, style), rope(kp, H_kv, cos, sin, style)
    v = a @ p["attention.wv"].T
    st["q"] = max(np.abs(qp).max(), np.abs(q).max())
    st["k"] = max(np.abs(kp).max(), np.abs(k).max())
    st["v"] = np.abs(v).max()
    ctx = sdpa_forward(q, k, v, x.shape[0], H, num_kv_heads=H_kv, causal=True)[0]
    o = ctx @ p["attention.wo"].T
    h = x + o
    st["wo"], st["h"] = np.abs(o).max(), np.abs(h).max()
    b = rmsnorm_forward(h, p["ffn_norm.gamma"], eps)[0]
    st["ffn_norm"] = np.abs(b).max()
    g, u = b @ p["feed_forward.w1"].T, b @ p["feed_forward.w3"].T
    st["w1"], st["w3"] = np.abs(g).max(), np.abs(u).max()
    g = silu(g)
    st["silu"] = np.abs(g).max()
    g = g * u
    st["gate"] = np.abs(g).max()
    f = g @ p["feed_forward.w2"].T
    y = h + f
    st["w2"], st["out"] = np.abs(f).max(), np.abs(y).max()
    return y, st


def lm_stats(config, params, ids, window=WINDOW):
    """[{step: max |.|}] of every layer, the larger of each over the windows: the Embedding's
    rows, then what each kind's calibrate role gives (reference/kinds.py)."""
    window = min([window] + [n for n in map(sequence_length, config) if n is not None])
    stats = None
    for i0 in range(0, len(ids), window):
        x = params["0.W"][ids[i0:i0 + window]]
        got = [{"out": np.abs(x).max()}]
        for i, spec in enumerate(config[1:], 1):
            role = declared(spec[0]).calibrate
            x, st = (forward_stats if role is None else quantizer(role))(
                spec, layer_params(params, i), x)
            got.append(st)
        stats = got if stats is None else [{k: max(a[k], b[k]) for k in a}
                                           for a, b in zip(stats, got)]
    return stats


def sequence_length(entry):
    """A (full) config entry's seq_len argument, None when its kind has none (convert_lm's
    getattr(layer, "seq_len"))."""
    spec = device_spec()
    names = spec.kind_of(entry[0])[spec.ARGS][::3]
    return entry[1 + names.index("seq_len")] if "seq_len" in names else None


def weights_only(spec, p, x, mask=None):
    """A Classifier's calibrate: (x, {}), its quantize takes no statistics (its weights' scale,
    a tied one its embedding's)."""
    return x, {}


def eps_units(eps, E, s_x):
    """decoder_convert.eps_units in float32: round(E eps / s_x^2), in [1, 2^29]."""
    v = min(f32(E) * f32(eps) / (f32(s_x) * f32(s_x)), f32(2.0 ** 29))
    return max(1, int(np.floor(v + f32(0.5))))


def rmsnorm(gamma, eps, s_x, s_y, prefix):
    """decoder_convert.RMSNorm.from_float."""
    E = len(gamma)
    gq, s_g = int8_weights(np.asarray(gamma).reshape(1, E))
    s_z = float(f32(s_g) * f32(E) ** f32(0.5) / f32(4096))
    spec = {"kind": "RMSNorm", "E": E, "eps": eps_units(eps, E, s_x),
            "mult": multiplier(s_z, s_y), "s_x": s_x, "s_g": s_g, "s_y": s_y}
    return spec, {prefix + "gamma": gq.reshape(E)}


def block(spec, p, st, s_x, prefix):
    """QDecoderBlock: its spec and arrays, named as its arrays() names them, in that order."""
    _, E, H, H_kv, F, S, eps, style, theta = spec
    s = {n: scale_for(v) for n, v in st.items()}
    parts, arrays = {}, {}
    for name, s_in, s_out, gamma in (("attention_norm", s_x, s["attention_norm"],
                                      p["attention_norm.gamma"]),
                                     ("ffn_norm", s["h"], s["ffn_norm"], p["ffn_norm.gamma"])):
        parts[name], made = rmsnorm(gamma, eps, s_in, s_out, prefix + name + ".")
        arrays.update(made)
    ins = {"wq": "attention_norm", "wk": "attention_norm", "wv": "attention_norm", "wo": "v",
           "w1": "ffn_norm", "w3": "ffn_norm", "w2": "gate"}
    outs = {"wq": "q", "wk": "k", "wv": "v", "wo": "wo", "w1": "w1", "w3": "w3", "w2": "w2"}
    for name, key in PROJECTIONS:
        parts[name], made = dense(p[key], None, s[ins[name]], s[outs[name]],
                                  prefix=prefix + name + ".")
        arrays.update(made)
    _, table = activation("silu", silu, s["w1"], s["silu"], prefix)
    arrays[prefix + "silu"] = table[prefix + "table"]
    D = E // H
    score = f32(s["q"]) * f32(s["k"]) / f32(D) ** f32(0.5) * ref.EXP_STEPS
    made = {"kind": "DecoderBlock", "E": E, "H": H, "H_kv": H_kv, "F": F, "seq_len": S,
            "rope": style, "theta": float(theta), "parts": parts,
            "score": list(ref.fixed_point(score, ref.EXP_LIMIT)),
            "ctx": multiplier(over(s["v"], ref.PROB_ONE), s["v"]),
            "gate": multiplier(times(s["silu"], s["w3"]), s["gate"]), "s_silu": s["silu"],
            "adds": [add_multipliers(s_x, s["wo"], s["h"]),
                     add_multipliers(s["h"], s["w2"], s["out"])],
            "s_x": s_x, "s_y": s["out"]}
    return made, arrays


def embedding_layer(spec, p, stats, s_x, s_y, prefix):
    """QEmbedding.quantize: its rows int8 at their own scale s_w (its output's)."""
    W, s_w = int8_weights(p["W"])
    return {"kind": "Embedding", "V": spec[1], "E": spec[2], "s_w": s_w}, {prefix + "W": W}


def rmsnorm_layer(spec, p, stats, s_x, s_y, prefix):
    """QRMSNorm.quantize: its output's scale from its statistics unless given."""
    return rmsnorm(p["gamma"], spec[2], s_x, s_y or scale_for(stats["out"]), prefix)


def block_layer(spec, p, stats, s_x, s_y, prefix):
    """QDecoderBlock.quantize: from its steps' statistics (block_stats)."""
    return block(spec, p, stats, s_x, prefix)


def classifier(spec, p, stats, s_x, s_y, prefix):
    """QClassifier.quantize: int32 logits; a tied one (spec[3]) takes the embedding's
    weights, bound on the board."""
    made = {"kind": "Classifier", "E": spec[1], "V": spec[2], "tied": bool(spec[3]),
            "s_x": s_x, "s_w": None}
    got = {}
    if not spec[3]:
        got[prefix + "W"], made["s_w"] = int8_weights(p["W"])
    return made, got


def quantize_lm(config, params, ids, window=WINDOW):
    """(specs, arrays "<i>.<name>") of the int8 language model, as the board makes it: each
    layer by its kind's quantize role (reference/kinds.py), its input scale the output scale
    of the layer before (its out_scale role)."""
    params = {k: np.asarray(v, np.float64) for k, v in params.items()}
    config = [full_entry(entry) for entry in config]
    stats = lm_stats(config, params, list(ids), window)
    specs, arrays = [], {}
    for i, spec in enumerate(config):
        role = declared(spec[0]).quantize
        if role is None or declared(spec[0]).int8_step is None:  # (a planned model's kind)
            raise ValueError("no int8 form for a %s layer of a language model" % spec[0])
        s_x = declared(specs[-1]["kind"]).out_scale(specs[-1]) if specs else None
        made, got = quantizer(role)(spec, layer_params(params, i), stats[i], s_x, None,
                                    "%d." % i)
        specs.append(made)
        arrays.update(got)
    return specs, arrays
