"""The host's side of an int8 model the device replied (QUANTIZE): its input quantized as the
device quantizes it, and its input and output scales."""

import numpy as np


def quantize_input(x, scale):
    """int8 saturate(round half up(x / scale)): what the device's quantize_tensor does."""
    return np.clip(np.floor(x / scale + 0.5), -128, 127).astype(np.int8)


def in_scale(head):
    first = head["layers"][0]
    return first["scales"]["x"] if first["kind"] == "SelfAttention" else first["s_x"]


def out_scale(head):
    last = head["layers"][-1]
    if last["kind"] == "SelfAttention":
        s = last["scales"]
        return s["ctx"] * s["wo"] if last["mults"]["out"] is None else s["y"]
    return last["s_x"] * last["s_w"] if last.get("mult") is None else last["s_y"]
