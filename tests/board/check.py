"""Assertions and fixtures for the board cases (MicroPython: ulab, no NumPy).

The host writes each case module's fixtures (inputs, and what the NumPy reference says the
outputs are) to FIXTURES/<module>/; `fixture(name)` reads one. Text, not binary, so the same
files serve float32 (ulab on a board) and float64 (the stand-in) alike.
"""

import gc
import json
import os

from ulab import numpy as np

FIXTURES = "fixtures"  # set by runner.main
_module = ""


def use(module):
    """Fixtures are read from FIXTURES/`module` from now on (runner.run_module calls it)."""
    global _module
    _module = module


def path(name):
    """Where fixture file `name` of the current module is (a raw file the host wrote)."""
    return "%s/%s/%s" % (FIXTURES, _module, name)


def names(prefix=""):
    """The fixtures (without .txt) of the current module whose names start with `prefix`."""
    found = [n[:-4] for n in os.listdir("%s/%s" % (FIXTURES, _module)) if n.endswith(".txt")]
    return sorted(n for n in found if n.startswith(prefix))


def fixture(name):
    """Read fixture `name`: {key: ndarray, or a JSON value}."""
    out = {}
    with open(path(name + ".txt")) as f:
        while True:
            head = f.readline()
            if not head:
                return out
            parts = head.split()
            key, kind = parts[0], parts[1]
            if kind == "J":
                out[key] = json.loads(f.readline())
                continue
            shape = tuple(int(d) for d in parts[2:])
            if len(shape) == 1:
                out[key] = np.array([float(v) for v in f.readline().split()])
                continue
            array = np.zeros(shape)
            for i in range(shape[0]):  # one row a line
                array[i, :] = np.array([float(v) for v in f.readline().split()])
            out[key] = array


def _flat(value):
    """A list of numbers from an ndarray, array.array, bytes, list or number."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    elif value is None or isinstance(value, (bool, int, float)):  # bool: not an int here
        value = [value]
    elif not isinstance(value, list):
        value = list(value)
    flat = []
    for item in value:
        if isinstance(item, list):
            flat.extend(item)
        else:
            flat.append(item)
    return flat


def _items(value):
    """The numbers of value one at a time, a 2-D array's a row at a time: a small heap holds
    the arrays, not all their numbers as objects at once (_flat's list)."""
    shape = getattr(value, "shape", None)
    if shape is not None and len(shape) == 2:
        for i in range(shape[0]):
            for item in value[i, :].tolist():
                yield item
    else:
        for item in _flat(value):
            yield item


def _shape(value):
    return tuple(value.shape) if hasattr(value, "shape") else (len(_flat(value)),)


def equal(got, want, what=""):
    """Exactly equal, item for item (integers, bit-exact results); names the first miss."""
    g, w = _flat(got), _flat(want)
    if len(g) != len(w):
        raise AssertionError("%s: %d items, expected %d" % (what, len(g), len(w)))
    for i in range(len(w)):
        if g[i] != w[i]:
            misses = sum(1 for a, b in zip(g, w) if a != b)
            raise AssertionError("%s: item %d is %r, expected %r (%d of %d differ)"
                                 % (what, i, g[i], w[i], misses, len(w)))


def close(got, want, atol=0.0, rtol=0.0, what=""):
    """max |got - want| <= atol + rtol * max |want|, over arrays of the same shape."""
    if _shape(got) != _shape(want):
        raise AssertionError("%s: shape %s, expected %s" % (what, _shape(got), _shape(want)))
    g, w = _flat(got), _flat(want)
    worst = max((abs(a - b) for a, b in zip(g, w)), default=0.0)
    bound = atol + rtol * max((abs(b) for b in w), default=0.0)
    if not worst <= bound:  # also catches NaN
        raise AssertionError("%s: max error %g over the bound %g" % (what, worst, bound))


def rel_error_below(got, want, tol, scale=None, what=""):
    """||got - want|| / ||want|| (or / ||scale||) <= tol, Frobenius norms."""
    if _shape(got) != _shape(want):
        raise AssertionError("%s: shape %s, expected %s" % (what, _shape(got), _shape(want)))
    error = sum((a - b) ** 2 for a, b in zip(_items(got), _items(want))) ** 0.5
    norm = max(sum(b * b for b in _items(want if scale is None else scale)) ** 0.5, 1e-30)
    if not error / norm <= tol:
        raise AssertionError("%s: relative error %g over %g" % (what, error / norm, tol))


def raises(kind, call, *args, **kwargs):
    """Call; it must raise `kind` (an exception class). Return the exception's text."""
    try:
        call(*args, **kwargs)
    except kind as err:
        return str(err)
    raise AssertionError("no %s from %s" % (kind.__name__, getattr(call, "__name__", call)))


def message(kind, call, *args, **kwargs):
    """The text of the `kind` exception the call raises, or 'no error'."""
    try:
        call(*args, **kwargs)
    except kind as err:
        return str(err)
    return "no error"


def heap_in_use():
    gc.collect()
    return gc.mem_alloc()


def heap_returns(step, calls=12, slack=64, what=""):
    """Calling `step` again and again does not grow the heap: the heap in use grows by more
    than `slack` bytes in neither the first half of the calls after the first (which may make
    what later calls reuse) nor the second half. A leak grows both (16 bytes a call: 80 in
    each); an object that a stale word on the C stack keeps alive (the collector is
    conservative) is one step, once."""
    in_use = [0] * calls  # made first: a list growing here would be counted as the step's
    for i in range(calls):
        step()
        in_use[i] = heap_in_use()
    middle = (calls + 1) // 2
    if in_use[middle] - in_use[1] > slack and in_use[-1] - in_use[middle] > slack:
        raise AssertionError("%s: the heap grows call after call: %s" % (what, in_use))


def allocates(call, *args):
    """Bytes the heap grows by during one call (the collector held off)."""
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        call(*args)
        return gc.mem_alloc() - before
    finally:
        gc.enable()


def close_each(got, want, atol=0.0, rtol=0.0, what=""):
    """|got - want| <= atol + rtol * |want| item for item (numpy.allclose's test: each item
    on its own scale, where close() takes the largest |want| for all)."""
    if _shape(got) != _shape(want):
        raise AssertionError("%s: shape %s, expected %s" % (what, _shape(got), _shape(want)))
    g, w = _flat(got), _flat(want)
    for i in range(len(w)):
        if not abs(g[i] - w[i]) <= atol + rtol * abs(w[i]):  # also catches NaN
            raise AssertionError("%s: item %d is %r, expected %r (atol %g, rtol %g)"
                                 % (what, i, g[i], w[i], atol, rtol))


# ---- what several case modules check ---------------------------------------------------------
ITEMSIZE = {"f": 4, "b": 1, "B": 1, "h": 2, "i": 4}


def record(payload):
    """(head, {name: (typecode, shape, values)}) of a link record (u16 head length, JSON
    head, then the arrays it lists, row-major), read here without tinyattn.link.records."""
    import array
    import struct

    (size,) = struct.unpack_from("<H", payload, 0)
    head = json.loads(str(payload[2:2 + size], "utf-8"))
    at, arrays = 2 + size, {}
    for name, code, shape in head.pop("arrays", []):
        nbytes = ITEMSIZE[code]
        for dim in shape:
            nbytes *= dim
        arrays[name] = (code, list(shape), list(array.array(code, payload[at:at + nbytes])))
        at += nbytes
    if at != len(payload):
        raise AssertionError("record of %d bytes, its head describes %d" % (len(payload), at))
    return head, arrays


def near_model(qm, host, what):
    """The device's int8 model holds the arrays of the host's (made from the same float model
    in float64), each integer within 1: its float32 may round a tie the other way."""
    mine = dict((n, buf) for n, buf, _, _ in qm.named_arrays())
    theirs = dict((n, buf) for n, buf, _, _ in host.named_arrays())
    equal(sorted(mine), sorted(theirs), what + " arrays")
    for n in sorted(theirs):
        close(mine[n], theirs[n], atol=1, what="%s %s" % (what, n))


def set_params(model, arrays):
    """Every parameter of `model` (as collect_params names it) from arrays[name]; the model."""
    for name, param, _ in model.collect_params():
        param[:] = arrays[name]
    return model


def fresh_import(package):
    """`package` imported anew, as in a fresh interpreter (its submodules dropped too)."""
    import sys

    for name in list(sys.modules):
        if name == package or name.startswith(package + "."):
            del sys.modules[name]
    gc.collect()
    return __import__(package)


def every(test, names):
    """test(name) for each of names (at least one), all of them run; one AssertionError
    listing every name that failed and why."""
    failed = []
    for name in names:
        try:
            test(name)
        except Exception as err:  # noqa: BLE001 - every name runs; all misses listed
            failed.append("%s %s: %s" % (name, type(err).__name__, err))
        gc.collect()
    if failed or not names:
        raise AssertionError("%d of %d configurations: %s"
                             % (len(failed), len(names), "; ".join(failed)))
