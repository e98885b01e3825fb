"""A user's files read with NumPy, every bad one refused in one line (FileFormatError).

    read_state_dict("model.npz")     {name: array} of np.savez(...) of a state_dict
    read_array("inputs.npy", "inputs")   one array of np.save(...)
    read_json("layers.json")         a JSON file; a syntax error names the file and line

The message names the file and what it is instead: missing, empty, cut short, not a zip, a
torch.save file, a .npy where a .npz belongs (or the other way), pickled objects, text.
"""

import json
import os
import zipfile

import numpy as np

from ..errors import InputError
NPY_MAGIC = b"\x93NUMPY"
ZIP_MAGIC = b"PK"


class FileFormatError(InputError):
    """A file that is not what the command reads; the message names it and says what it is."""


def _zip_problem(path, wanted):
    """What is wrong with a zip file as a .npz (None: it holds .npy arrays)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError):
        return "%s is a zip file cut short or damaged (truncated?), not %s" % (path, wanted)
    if any(n == "data.pkl" or n.endswith("/data.pkl") for n in names):
        return ("%s is a torch.save file, not %s: save with np.savez as README shows: "
                "np.savez(\"model.npz\", **{k: v.detach().cpu().numpy() for k, v in "
                "model.state_dict().items()})" % (path, wanted))
    if not any(n.endswith(".npy") for n in names):
        return "%s is a zip file without .npy arrays, not %s" % (path, wanted)
    return None


def _what_is(path, head, wanted):
    """What a file that np.load refused is, from its first bytes."""
    if not head:
        return "%s is empty (0 bytes), not %s" % (path, wanted)
    if head.startswith(ZIP_MAGIC):
        return _zip_problem(path, wanted) or "%s is a damaged .npz, not %s" % (path, wanted)
    if head.startswith(NPY_MAGIC):
        return "%s is a .npy file cut short or damaged, not %s" % (path, wanted)
    if head[:1] == b"\x80":
        return "%s holds pickled Python objects, not %s" % (path, wanted)
    return "%s is not %s (it starts with %r: text or another format)" % (path, wanted, head[:8])


def _load(path, wanted):
    """np.load(path) without pickles; FileFormatError naming the file and what it is."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as err:
        raise FileFormatError("%s: %s" % (path, err.strerror or err)) from None
    problem = _zip_problem(path, wanted) if head.startswith(ZIP_MAGIC) else None
    if problem:
        raise FileFormatError(problem)
    try:
        return np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):
        raise FileFormatError(_what_is(path, head, wanted)) from None


def read_state_dict(path):
    """{name: array} of a .npz written by np.savez (a PyTorch state_dict)."""
    wanted = "a state_dict .npz (np.savez)"
    data = _load(path, wanted)
    if isinstance(data, np.ndarray):
        raise FileFormatError("%s is a single array (.npy), not %s" % (path, wanted))
    with data:
        if not data.files:
            raise FileFormatError("%s holds no arrays (an empty .npz)" % path)
        state = {}
        for key in data.files:
            try:
                state[key] = data[key]
            except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
                raise FileFormatError("%s: array %r cannot be read (%s)"
                                      % (path, key, _reason(err))) from None
    return state


def read_array(path, what):
    """The one array of a .npy written by np.save; `what` names it in messages."""
    wanted = "a .npy array of %s (np.save)" % what
    data = _load(path, wanted)
    if not isinstance(data, np.ndarray):
        data.close()
        raise FileFormatError("%s is a .npz archive, not %s" % (path, wanted))
    return data


def _reason(err):
    text = str(err)
    if "pickle" in text or "Object arrays" in text:
        return "pickled Python objects"
    return "cut short or damaged" if isinstance(err, (EOFError, zipfile.BadZipFile)) else text


def read_json(path):
    """A JSON file's value; a syntax error names the file, line and column."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise FileFormatError("%s line %d column %d: not JSON: %s"
                              % (path, err.lineno, err.colno, err.msg)) from None
    except UnicodeDecodeError:
        raise FileFormatError("%s is not a UTF-8 text file (JSON)" % path) from None
    except OSError as err:
        raise FileFormatError("%s: %s" % (path, err.strerror or err)) from None
