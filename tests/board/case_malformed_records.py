"""Malformed records are BAD_PAYLOAD for every message type, before anything else is looked
at (tinyattn.records, tinyattn.json_syntax), and the strict JSON check agrees with CPython.

The host sends (fixtures): requests of every type whose JSON heads MicroPython's own parser
would take ('{"a":}' is {} to it), and texts labelled good or bad by CPython's strict json.
The requests (and well-formed ones without the arrays their message takes) go through
link.Session.answer with no model loaded, so that a NO_MODEL, a BAD_VALUE or an OK answer
would show the record was not checked first.
"""

from binascii import unhexlify

import check
from tinyattn.link import json_syntax, server as link
from tinyattn.link.wire import BAD_PAYLOAD, ERRORS, MESSAGES


class Port:
    """Takes the session's answers: ("error", code, message) or ("reply", type)."""

    def __init__(self):
        self.answers = []

    def error(self, seq, code, message):
        self.answers.append(("error", code, message))

    def send(self, kind, seq, payload=b""):
        self.answers.append(("reply", kind, bytes(payload)))


def test_a_malformed_record_is_bad_payload_for_every_message_type():
    session, port = link.Session(), Port()
    wrong = []
    for kind, payload in check.fixture("records")["requests"]:
        port.answers = []
        session.answer(port, kind, 1, unhexlify(payload))
        got = port.answers[0]
        if got[0] != "error" or got[1] != BAD_PAYLOAD:
            wrong.append("%s %r: %s" % (MESSAGES[kind], unhexlify(payload)[2:],
                                        ERRORS.get(got[1], "OK") if got[0] == "error" else "OK"))
    if wrong:
        raise AssertionError("%d answered as if well formed: %s" % (len(wrong), "; ".join(wrong[:8])))


def test_the_json_check_takes_what_cpython_takes_and_nothing_else():
    wrong = []
    for text, good in check.fixture("records")["texts"]:
        data = unhexlify(text)
        try:
            json_syntax.check(data)
            took = True
        except ValueError:
            took = False
        if took != good:
            wrong.append("%r %s" % (data, "refused" if good else "taken"))
    if wrong:
        raise AssertionError("%d verdicts differ from CPython's: %s" % (len(wrong), "; ".join(wrong[:8])))
