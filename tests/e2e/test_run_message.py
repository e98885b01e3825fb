"""RUN (device/tinyattn/link/run.py): a function of the package on the board, its records
streamed through the link. The bench and the demo reach a board this way, not through the
raw REPL: the bench's records (the int8 path among them) come as RECORD frames, a bad RUN
is one error and the link goes on."""

import json
import subprocess
import sys

import pytest

from tinyattn_host import protocol as P
from tinyattn_host.board.board import Board
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


@pytest.fixture
def link(virtual_board):
    with Board(port=virtual_board.port, out=lambda *a: None) as board:
        yield board.start_link()
        board.stop_link()


def test_the_bench_streams_its_records_through_the_link(link):
    records = []
    reply = link.run("bench", "run", records.append,
                     {"quick": True, "repeats": 1, "cap": 0.05, "search_largest": False},
                     timeout=300)
    assert reply == {"records": len(records)}
    kinds = [r["kind"] for r in records]
    assert kinds[0] == "header" and kinds[-1] == "done" and "attention" in kinds
    iris = [r for r in records if r["kind"] == "iris"]
    assert iris and all(set(r["runs"]) == {"float_fwd", "int8_fwd"} for r in iris)
    assert link.hello()["protocol"] == P.PROTOCOL  # the link goes on after it


@pytest.mark.parametrize("head, says", [
    ({"module": "../store", "function": "load"}, "dotted names of the package"),
    ({"module": "no_such_module", "function": "run"}, "no module tinyattn.no_such_module"),
    ({"module": "rng", "function": "no_such_function"}, "has no function 'no_such_function'"),
    ({"module": "bench", "function": "run", "kwargs": [1]}, "'kwargs' must be an object"),
    ({"function": "run"}, "'module' is missing"),
    ({"module": "bench", "function": "run", "please": 1}, "unknown head field 'please'"),
    ({"module": "runner", "function": "records", "path": "tests"}, "an absolute folder"),
    ({"module": "runner", "function": "records", "path": "/no_such_folder"},
     "no module runner on the device"),
])
def test_a_bad_run_is_one_error_and_the_link_goes_on(link, head, says):
    with pytest.raises(P.ErrorReply, match=says) as raised:
        link.request(P.RUN, head)
    assert raised.value.name == "BAD_VALUE"
    assert link.hello()["protocol"] == P.PROTOCOL


def test_the_bench_command_on_a_port_goes_through_the_link(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "bench", "--port", "virtual",
                           "--quick", "--repeats", "1", "--cap", "0.05", "--out", str(tmp_path),
                           "--doc", str(tmp_path / "performance.md")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = json.loads((tmp_path / "bench.json").read_text())
    assert results["header"]["timing_heap"] and results["header"]["package"].startswith(".")
    assert results["iris"] and results["attention"] and results["largest"]
