"""Quantizer: a model's float input to int8 and its int outputs to float, by numbers.py's
float32 arithmetic: through float_io's steps and buffers where ulab lends them (imported on a
model's first forward, not by its load: its code is not held before)."""

from ulab import numpy as np

from .numbers import NOT_FINITE, _offset_bytes, _quantize, dequantize


STEPS_MOST = 1024
"""The most values the steps quantize a call: ~20 ns a value on the unix ports against ulab's
~6 ns and ~4 us a call (its four arrays), so past ~1,000 values ulab's path is as fast."""


class Quantizer:
    """quantize_into and dequantize for one model's input and output scales, their numbers
    made once as one-element float32 ulab arrays: ulab turns every Python number an operation
    gets into an array of its own (the same float32 numbers, so the same results). Where ulab
    lends its arrays' buffers (not the stand-in), a dense float32 input is quantized by
    float_io's steps of this very arithmetic, found on the first call, and an output goes to
    float32 in a buffer kept for its shape: no array a call but the output
    (docs/quantization.md, *Speed*)."""

    def __init__(self, inverse_scale, low, out_scale):
        self.inverse, self.low_value, self.low = _number(inverse_scale), low, _number(low)
        self.high, self.offset, self.scale = _number(127), _number(128), _number(out_scale)
        self.table = self._io = None  # float_io's steps and module (False: ulab lends no buffer)
        self._floats, self._rows, self._cols = None, 0, 0  # to_float32's output buffer
        self._values = self._wide = None  # the ints it was made for: int32 (wide) or int8

    def offset_bytes(self, x):
        """uint8(clip(x * inverse, low, 127) + 128): what the steps are found from."""
        return _offset_bytes(x, self.inverse, self.low_value, self.low, self.high, self.offset)

    def _find_steps(self):
        """float_steps.steps of this arithmetic, or False; float_io imported now, float_steps
        only for this and let go after (its code is garbage once the table is made)."""
        from . import float_io, float_steps
        from ..let_go import let_go

        self._io = float_io
        try:
            return float_steps.steps(self.offset_bytes) or False
        finally:
            let_go((), (float_steps.__name__,))  # (collected: the search's garbage goes too)

    def prepare(self):
        """Find the steps (once)."""
        if self.table is None:
            self.table = self._find_steps()

    def quantize_into(self, x, out):
        self.prepare()
        table = self.table
        if table and len(out) <= STEPS_MOST and getattr(x, "itemsize", 0) == 4:
            try:
                bad = self._io.to_int8(x, out, len(out), table)
            except TypeError:  # a view ulab lends no buffer of (not dense)
                bad = -1
            if bad == 0:
                return
            if bad > 0:
                raise ValueError(NOT_FINITE)
        _quantize(x, self.inverse, self.low_value, self.low, self.high, self.offset, out)

    def dequantize(self, values, rows, cols):
        """values (rows * cols ints) times the output scale: a fresh float (rows, cols)."""
        if not self.table:
            return dequantize(values, rows, cols, self.scale)
        if values is not self._values or rows != self._rows or cols != self._cols:
            self._floats, self._rows, self._cols = np.zeros((rows, cols)), rows, cols
            self._values, self._wide = values, len(bytes(memoryview(values)[:1])) == 4
        self._io.to_float32(values, self._floats, rows * cols, self._wide)
        return self._floats * self.scale


def _number(value):
    return np.array([[float(value)]])
