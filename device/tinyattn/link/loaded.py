"""What the host has loaded on the link's session, or the NO_MODEL error naming the request
that loads it."""

from .framing import LinkError
from .wire import NO_MODEL


def need_model(session):
    if session.model is None:
        raise LinkError(NO_MODEL, "no model loaded: send LOAD_MODEL first")
    return session.model


def need_qmodel(session):
    if session.qmodel is None:
        raise LinkError(NO_MODEL, "no int8 model: send QUANTIZE or LOAD_QMODEL first")
    return session.qmodel
