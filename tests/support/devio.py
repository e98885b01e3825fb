"""Test support on the device side: read inputs written by the host, print outputs back.

Text, not binary, so the same files work with float32 and float64 builds of ulab.
"""

import json

from ulab import numpy as np


def load(path):
    """Read the arrays and values the host wrote: {name: ndarray or value}."""
    out = {}
    with open(path) as f:
        while True:
            head = f.readline()
            if not head:
                return out
            parts = head.split()
            name, kind = parts[0], parts[1]
            if kind == "J":
                out[name] = json.loads(f.readline())
                continue
            shape = tuple(int(d) for d in parts[2:])
            if len(shape) == 1:
                out[name] = np.array([float(v) for v in f.readline().split()])
                continue
            array = np.zeros(shape)
            for i in range(shape[0]):  # one row a line
                array[i, :] = np.array([float(v) for v in f.readline().split()])
            out[name] = array


def _is_array(value):
    return hasattr(value, "shape") and hasattr(value, "tolist")


def dump(outputs):
    """Print outputs for the host: arrays as shape and values, anything else as JSON."""
    for name, value in outputs.items():
        if _is_array(value):
            shape = " ".join(str(d) for d in value.shape)
            print("@@OUT", name, "A", shape)
            rows = [value] if len(value.shape) == 1 else value
            for row in rows:  # a row at a time: long lists of floats fragment the heap
                print(" ".join(repr(float(v)) for v in row.tolist()), end=" ")
            print()
        else:
            print("@@OUT", name, "J")
            print(json.dumps(value))


def value_errors(calls):
    """Call each of {name: function}; return {name: its ValueError's text, or 'no error'}."""
    errors = {}
    for name, call in calls.items():
        try:
            call()
            errors[name] = "no error"
        except ValueError as err:
            errors[name] = str(err)
    return errors
