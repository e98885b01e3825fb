"""`make run` says each thing once: the requests of its Iris part, counted by kind on the
virtual board. Before issue 37 it took 58 (QUANTIZE twice a model, HELLO twice, GET_WEIGHTS
to compare a config, STATUS before each sizing, FORWARD and FORWARD_INT8 for every batch).
The digits and vowels parts send no STATUS: the board sizes its work (link/chunks.py)."""

from collections import Counter

import pytest

from tinyattn_host import protocol as P
from tinyattn_host.board.board import Board
from tinyattn_host.checks.run_check import Check
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")
BEFORE = 58  # the Iris part's requests before (issue 37's trace)
BATCHES = 10  # 150 rows in batches of 16


def counted(monkeypatch):
    """A Counter of the messages the host sends from now on, by name (a transfer's message
    once, under its own name)."""
    sent = Counter()
    raw, in_parts = P.Link.request_raw, P.Link.request_in_parts

    def count_raw(link, kind, payload, timeout=None):
        sent[P.MESSAGES[kind]] += 1
        return raw(link, kind, payload, timeout)

    def count_in_parts(link, kind, payload, timeout=None):
        sent[P.MESSAGES[kind]] += 1
        return in_parts(link, kind, payload, timeout)

    monkeypatch.setattr(P.Link, "request_raw", count_raw)
    monkeypatch.setattr(P.Link, "request_in_parts", count_in_parts)
    return sent


def test_the_iris_part_asks_each_thing_once(virtual_board, monkeypatch):
    with Board(port=virtual_board.port, out=lambda *a: None) as board:
        sent = counted(monkeypatch)
        board.start_link()
        summary = Check(board, batch_size=16, out=lambda *a: None, progress=False).run()
        board.stop_link()
    assert summary.ok and not summary.reduced and len(summary.batches) == 2 * BATCHES
    assert sent == {"HELLO": 1,  # the link's start; its reply is the summary's device
                    "LOAD_MODEL": 3,  # random, trained, random again for the train step
                    "QUANTIZE": 2,  # one a model; the reply is the int8 model checked
                    "FORWARD": 2 * BATCHES,  # float and int8 of a batch in one request
                    "TRAIN_STEP": 1, "GET_WEIGHTS": 1,  # the step's weights compared
                    "EXIT": 1}
    assert sum(sent.values()) - sent["EXIT"] <= 0.6 * BEFORE


def test_the_digits_and_vowels_parts_ask_no_status(virtual_board, monkeypatch):
    """The board sizes its work itself (link/chunks.py): no STATUS probes the heap before a
    model, no second HELLO (a link restart) in a heap that holds them."""
    with Board(port=virtual_board.port, out=lambda *a: None) as board:
        sent = counted(monkeypatch)
        board.start_link()
        summary = Check(board, batch_size=16, out=lambda *a: None, progress=False,
                        digits=16, vowels=4).run()
        board.stop_link()
    assert summary.ok and not summary.reduced
    assert sent["STATUS"] == 0 and sent["HELLO"] == 1, sent
