"""The link's typed requests (docs/protocol.md, "Messages"): a method a message, its head and
arrays made here, so that no call site writes a raw head. protocol.Link has them."""

import numpy as np

from .device_modules import device_module

wire = device_module("link/wire")


class Requests:
    """Each method sends one request through self.request and returns (part of) the reply."""

    def load_model(self, config, params):
        """A Sequential of `config` with `params` (name -> float array); the reply's head:
        `params`, the `config` the device built, the heap bytes `free` after loading."""
        head, _ = self.request(wire.LOAD_MODEL, {"config": config}, params)
        self.free = head.get("free")
        return head

    def forward(self, x, mask=None, attention=False, int8=False, timeout=None):
        """(head, arrays) of FORWARD: `logits` (and `attention` when asked); with int8, the
        int8 model's output for the same rows too (`xq` as the device quantized x, `y`);
        head `at_once` when the board ran the rows in pieces that fit its heap."""
        head = {"attention": True} if attention else {}
        if int8:
            head["int8"] = True
        return self.request(wire.FORWARD, head, _with_mask({"x": x}, mask), timeout)

    def forward_int8(self, xq, mask=None, timeout=None):
        """(head, arrays) of FORWARD_INT8: `y` (head `rows`, `cols`) for int8 input xq."""
        return self.request(wire.FORWARD_INT8, {}, _with_mask({"x": xq}, mask), timeout)

    def quantize(self, rows, mask=None, timeout=None):
        """(head, arrays) of QUANTIZE calibrated on `rows`: the int8 model's description
        (`at_once`: fewer than 16 rows calibrated at a time, as many as fit the heap)."""
        return self.request(wire.QUANTIZE, {}, _with_mask({"x": rows}, mask), timeout)

    def load_qmodel(self, head, arrays):
        """(head, arrays) of LOAD_QMODEL: an int8 model as QUANTIZE replies it."""
        return self.request(wire.LOAD_QMODEL, {"layers": head["layers"]}, arrays)

    def train_step(self, x, labels, optimizer="sgd", lr=0.01):
        """The head of TRAIN_STEP's reply (`loss`, `us`, `at_once` when in pieces): one step
        on rows x, int labels."""
        return self.request(wire.TRAIN_STEP, {"optimizer": optimizer, "lr": lr},
                            {"x": x, "labels": np.asarray(labels).astype(np.int32)})[0]

    def get_weights(self):
        """(config, parameters) of the loaded model."""
        head, arrays = self.request(wire.GET_WEIGHTS)
        return head["config"], arrays

    def stream(self, x, window, reset=False):
        """(head, arrays) of STREAM: the output for one more token x (1, features)."""
        return self.request(wire.STREAM, {"window": window, "reset": reset}, {"x": x})


def _with_mask(arrays, mask):
    if mask is not None:
        arrays["mask"] = mask
    return arrays
