"""RUN: a function of the package run on the device, its records streamed to the host.

The request names a module of the package and a function in it, and the keyword arguments
to call it with; the function also gets `emit`, which sends each record (a dict) at once as
a RECORD frame with the request's seq. The reply comes when the function returns: how many
records it sent. The bench (module "bench", function "run": its own mip package, which the
core never imports) and the demo ("iris_demo", "records") reach a board this way, through the
link like every other request. With `path` (a folder on the board's flash, e.g. "/tests") the
module is a top-level one of that folder, on sys.path while it runs: the board test runner
(tests/board/runner.py, function "records") runs the case modules this way.
"""

import sys

from .framing import LinkError
from .records import expect, field, only, pieces
from .wire import BAD_VALUE, RECORD


def run(session, head, arrays):
    only(head, ("module", "function", "kwargs", "path"))
    expect(arrays, ())
    module = field(head, "module", "str")
    name = field(head, "function", "str")
    kwargs = field(head, "kwargs", "dict", {})
    path = field(head, "path", "str", None)
    if not all(_identifier(part) for part in module.split(".") + [name]):
        raise LinkError(BAD_VALUE, "module %r and function %r must be dotted names of the "
                        "package (for example 'bench' and 'run')" % (module, name))
    if path is not None and not path.startswith("/"):
        raise LinkError(BAD_VALUE, "path %r must be an absolute folder of the board's flash "
                        "(for example '/tests')" % path)
    if path is None:
        module = "tinyattn." + module
    else:
        sys.path.insert(0, path)
    try:
        sent = _call(session, module, name, kwargs)
    finally:
        if path is not None:
            sys.path.remove(path)
    return {"records": sent}, ()


def _call(session, module, name, kwargs):
    """Import `module`, call its function `name` with emit and `kwargs`; the records sent."""
    try:
        found = getattr(__import__(module, None, None, [name]), name, None)
    except ImportError as err:
        raise LinkError(BAD_VALUE, "no module %s on the device: %s" % (module, err))
    if not callable(found):
        raise LinkError(BAD_VALUE, "%s has no function %r" % (module, name))
    sent = [0]

    def emit(record):
        size, parts = pieces(record)
        session.port.send_parts(RECORD, session.seq, size, parts)
        sent[0] += 1

    found(emit=emit, **kwargs)
    return sent[0]


def _identifier(text):
    return bool(text) and not text[0].isdigit() and all(
        c.isalpha() or c.isdigit() or c == "_" for c in text)
