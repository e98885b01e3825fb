"""A user's own PyTorch model on the virtual board (issue 20): the torch fixtures
(tests/fixtures/torch, made once by tests/fixtures/make_torch_fixtures.py) go import-torch ->
check-model against the reference and torch's out.npy (and an out.npy made in training mode,
which check-model names) -> export-torch; check-model's exit codes; messages larger than
max_message in parts (TRANSFER, PART); README's PyTorch walk pasted into a shell."""

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host import modelfile, protocol as P
from tinyattn_host.__main__ import main
from tinyattn_host.board.board import Board
from tinyattn_host.checks.model_check import check_model
from tinyattn_host.interop.statedict import import_npz, read_description
from tinyattn_host.reference.kinds import param_shapes
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
ROWS = 2  # a forward of this model takes seconds a row on the ulab stand-in


@pytest.fixture
def psram_board(start_virtual_board):
    """A virtual board with a PSRAM board's heap (8 MB) when the interpreter has a real ulab
    (the unix port's own is 1 MB on 32 bits); the stand-in keeps its 64 MB."""
    from board_cases import VIRTUAL_HEAP

    return start_virtual_board(
        heap=VIRTUAL_HEAP if unixport.has_ulab(unixport.interpreter()) else None)


def imported(variant, folder):
    path = folder / ("%s.bin" % variant)
    import_npz(FIXTURES / variant / "model.npz",
               read_description(FIXTURES / variant / "layers.json"), path)
    return path


def test_every_variant_agrees_with_the_reference_and_with_torch(psram_board, tmp_path):
    X = np.load(FIXTURES / "inputs.npy")[:ROWS]
    lines = []
    with Board(port=psram_board.port, out=lambda *a: None) as board:
        link = board.start_link()
        for variant in ("base", "norm_first", "gelu", "dropout"):
            expect = np.load(FIXTURES / variant / "out.npy")[:ROWS]
            ok, worst = check_model(link, imported(variant, tmp_path), X, out=lines.append,
                                    expect=expect)
            assert ok and worst <= 1e-4, "\n".join(lines)
            assert lines[-1].startswith("PASS") and "against the expected outputs" in lines[-1]
        wrong = np.load(FIXTURES / "base" / "out.npy")[:ROWS]  # not the gelu model's outputs
        ok, _ = check_model(link, tmp_path / "gelu.bin", X, out=lines.append, expect=wrong)
        assert not ok and "MISMATCH (expect)" in lines[-2]
        assert lines[-1].startswith("FAIL") and "the expected outputs disagree with the board " \
            "and the reference agrees with the board" in lines[-1]
        train_mode = np.load(FIXTURES / "dropout" / "out_train.npy")[:ROWS]  # no model.eval()
        ok, _ = check_model(link, tmp_path / "dropout.bin", X, out=lines.append,
                            expect=train_mode)
    assert not ok and "MISMATCH (expect)" in lines[-2]
    assert "the reference agrees with the board: only the expected outputs differ. The usual " \
        "cause: the PyTorch model was in training mode when it made them (dropout on): call " \
        "model.eval() first." in lines[-1]


def test_check_model_exit_codes_and_one_line_errors(psram_board, tmp_path, capsys):
    model = imported("base", tmp_path)
    X = np.load(FIXTURES / "inputs.npy")[:ROWS]
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "narrow.npy", X[:, :191])
    np.save(tmp_path / "wrong.npy", np.load(FIXTURES / "gelu" / "out.npy")[:ROWS])
    port = ["--port", psram_board.port]

    def run(*args):
        code = main(["check-model", *map(str, args), *port])
        return code, capsys.readouterr()

    code, got = run(model, tmp_path / "narrow.npy")
    assert code == 1 and got.err.count("\n") == 1, got.err
    assert "rows of 191 features; %s takes rows of 192" % model in got.err
    code, got = run(model, tmp_path / "x.npy", "--expect", tmp_path / "wrong.npy")
    assert code == 1 and "FAIL" in got.out and "expected outputs disagree" in got.out
    code, got = run(model, tmp_path / "x.npy", "--expect", FIXTURES / "base" / "model.npz")
    assert code == 1 and "model.npz is a .npz archive, not a .npy array of expected" in got.err
    E = 4  # the device refuses each: its sequences are over the link's 256 (flow's "tokens")
    np.save(tmp_path / "seq.npy", np.zeros((300, E), np.float32))
    for entry in (["SelfAttention", E, 1, 300, False],
                  ["TransformerEncoderLayer", E, 1, 8, 0.0, "relu", False, 1e-5, 300, False]):
        long = tmp_path / "long.bin"
        modelfile.write_model(long, "sequential", {"config": [entry]}, {
            "0." + name: np.full(shape, 0.5, np.float32)
            for name, shape in param_shapes(entry).items()})
        code, got = run(long, tmp_path / "seq.npy")
        assert code == 1 and got.err.count("\n") == 1 and "Traceback" not in got.err, got.err
        assert "error: BAD_VALUE: " in got.err and "seq_len 300" in got.err  # the device refused


def test_a_model_too_large_for_the_heap_is_refused_saying_both_sizes(start_virtual_board,
                                                                      tmp_path, capsys):
    board = start_virtual_board(heap="3m")
    with Board(port=board.port, out=lambda *a: None) as b:
        free = b.start_link().hello()["free"]
    n = 512  # about 4 MB on the device, in a 3 MB heap
    modelfile.write_model(tmp_path / "big.bin", "sequential", {"config": [["Dense", n, n]]},
                          {"0.W": np.zeros((n, n), np.float32), "0.b": np.zeros(n, np.float32)})
    np.save(tmp_path / "x.npy", np.zeros((1, n), np.float32))
    code = main(["check-model", str(tmp_path / "big.bin"), str(tmp_path / "x.npy"),
                 "--port", board.port])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "big.bin does not fit the board's heap: not loaded" in err
    assert "(about 4102 KB needed: its 1026 KB message" in err  # 1026 + 2 * 1026 + 1024
    assert "the board has %d KB free" % (free // 1024) in err


def test_messages_over_max_message_go_in_parts(psram_board):
    rng = np.random.default_rng(7)
    W = rng.standard_normal((3, 64)).astype(np.float32)
    config, params = [["Dense", 64, 3, False]], {"0.W": W}
    x = rng.standard_normal((300, 64)).astype(np.float32)  # 77 KB: over one message
    seen = []
    with Board(port=psram_board.port, out=lambda *a: None) as board:
        link = board.start_link()
        assert link.max_message == P.wire.MAX_MESSAGE
        link.request(P.LOAD_MODEL, {"config": config}, params)
        link.progress = lambda done, total: seen.append((done, total))
        _, got = link.request(P.FORWARD, {}, {"x": x})
        np.testing.assert_allclose(got["logits"], x.astype(np.float64) @ W.T, rtol=1e-5,
                                   atol=1e-5)
        payload = P.encode({}, {"x": x})
        assert seen[-1] == (len(payload), len(payload)) and len(seen) > 2
        link.progress = None
        refused = []
        orphan = link.next_seq()  # a PART without its TRANSFER
        link.send_bytes(P.frame(P.PART, orphan, b"abc"))
        refused.append(_error(link, orphan))
        bad_crc = P.encode({"type": P.FORWARD, "bytes": len(payload),
                            "crc": zlib.crc32(payload) ^ 1})
        seq = link.next_seq()
        link.send_bytes(P.frame(P.TRANSFER, seq, bad_crc))
        link.expect_reply(P.TRANSFER | P.REPLY, seq)
        for i in range(0, len(payload), link.chunk):
            last = i + link.chunk >= len(payload)
            link.send_bytes(P.frame(P.PART, seq, payload[i:i + link.chunk], 0 if last else P.MORE))
            if not last:
                assert struct.unpack("<I", link.expect_reply(P.ACK, seq)) == (i + link.chunk,)
        refused.append(_error(link, seq))
        with pytest.raises(P.ErrorReply) as err:
            link.request(P.TRANSFER, {"type": P.FORWARD, "bytes": 1 << 40, "crc": 0})
        refused.append((err.value.name, err.value.message))
        _, again = link.request(P.FORWARD, {}, {"x": x[:5]})  # still serving
        assert np.allclose(again["logits"], got["logits"][:5])
        _, back = P.decode(link.request_in_parts(P.FORWARD, P.encode({}, {"x": x[:5]})))
        assert np.array_equal(back["logits"], again["logits"])
    assert refused[0] == ("BAD_PAYLOAD", "PART of seq %d without its TRANSFER" % orphan)
    assert refused[1] == ("BAD_CRC", "the transfer's CRC-32 does not match: dropped")
    assert refused[2][0] == "NO_MEMORY" and "a message of 1099511627776 bytes does not fit: " \
        in refused[2][1] and "bytes free" in refused[2][1]


def _error(link, seq):
    with pytest.raises(P.ErrorReply) as err:
        link.expect_reply(P.FORWARD | P.REPLY, seq)
    return err.value.name, err.value.message


def test_an_int8_model_and_a_calibration_batch_over_one_message(psram_board):
    """QUANTIZE with a 67 KB calibration batch, and LOAD_QMODEL of a 70 KB int8 model (each
    in parts): the integer outputs are the reference's, bit for bit."""
    from tinyattn_host.quantize import in_scale, quantize_tensor
    from tinyattn_host.reference.sequential import int8_forward, int8_layers

    rng = np.random.default_rng(11)
    calibration = rng.standard_normal((33, 512)).astype(np.float32)  # 67 KB
    with Board(port=psram_board.port, out=lambda *a: None) as board:
        link = board.start_link()
        for width, rows in ((4, 33), (136, 2)):  # a wide batch; then a wide model
            config = [["Dense", 512, width, True]]
            params = {"0.W": (rng.standard_normal((width, 512)) / 20).astype(np.float32),
                      "0.b": np.zeros(width, np.float32)}
            sent = []
            link.progress = lambda done, total: sent.append(total)
            link.request(P.LOAD_MODEL, {"config": config}, params)
            sent.clear()  # the float model went in parts too (280 KB for the wide one)
            qhead, qarrays = link.request(P.QUANTIZE, {}, {"x": calibration[:rows]})
            link.request(P.LOAD_QMODEL, {"layers": qhead["layers"]}, qarrays)
            xq = quantize_tensor(calibration[:4], in_scale(qhead["layers"]))
            head, got = link.request(P.FORWARD_INT8, {}, {"x": xq})
            layers = int8_layers(qhead["layers"], qarrays)
            want = int8_forward(xq, layers)[-1]
            np.testing.assert_array_equal(got["y"].reshape(head["rows"], head["cols"]), want)
            big = P.encode({}, {"x": calibration[:rows]}) if width == 4 else \
                P.encode({"layers": qhead["layers"]}, qarrays)
            assert len(big) > P.wire.MAX_MESSAGE and max(sent) == len(big)  # in parts


@pytest.mark.skipif(not unixport.has_ulab(unixport.interpreter()),
                    reason="a 1 MB model: with a real ulab only (MICROPYTHON=...), not the "
                           "stand-in, whose arrays are lists of Python floats")
def test_a_1_mb_model_checks_on_a_psram_board(psram_board, tmp_path):
    rng = np.random.default_rng(3)
    n = 512
    modelfile.write_model(tmp_path / "big.bin", "sequential", {"config": [
        ["Dense", n, n, True], ["Activation", "relu"], ["Dense", n, 4, True]]}, {
        "0.W": (rng.standard_normal((n, n)) / n ** 0.5).astype(np.float32),
        "0.b": rng.standard_normal(n).astype(np.float32) * 0.1,
        "2.W": (rng.standard_normal((4, n)) / n ** 0.5).astype(np.float32),
        "2.b": np.zeros(4, np.float32)})
    assert (tmp_path / "big.bin").stat().st_size > 1 << 20
    lines, shown = [], []

    class Shown:  # a Progress on a terminal, recorded
        def show(self, done, total, label):
            shown.append((done, total, label))

        def clear(self):
            pass

    with Board(port=psram_board.port, out=lambda *a: None) as board:
        ok, worst = check_model(board.start_link(), tmp_path / "big.bin",
                                rng.standard_normal((4, n)), out=lines.append, progress=Shown())
    assert ok and worst <= 1e-4, "\n".join(lines)
    assert lines[0].startswith("loaded %s: 1034 KB in " % (tmp_path / "big.bin"))
    assert shown[-1][:2] == (1034, 1034) and len(shown) > 10


@pytest.mark.parametrize("variant", ["base", "norm_first", "gelu", "dropout"])
def test_fine_tuned_on_the_board_then_exported_in_torchs_keys_and_shapes(psram_board, tmp_path,
                                                                         variant):
    """One SGD step on the board, the weights read back, export-torch: torch's keys and shapes
    (manifest.json, from each variant's own state_dict). Without dropout the step is the
    reference's (loss and every weight within 1e-4); the dropout 0.1 variant trains with its
    dropout: a finite loss, and weights that are not the reference's dropout-free step.
    (tests/fixtures/check_board_export.py loads such exports into torch, not in CI.)"""
    import json

    from tinyattn_host.checks.digits_check import relative_error
    from tinyattn_host.interop.arrayfiles import read_state_dict
    from tinyattn_host.reference.training import SGD, train_step

    X = np.load(FIXTURES / "inputs.npy")[:ROWS]
    labels = np.load(FIXTURES / variant / "out.npy")[:ROWS].argmax(axis=1).astype(np.int32)
    torch_keys = json.loads((FIXTURES / "manifest.json").read_text())["variants"][variant][
        "state_dict"]
    _, meta, arrays = modelfile.read_model(imported(variant, tmp_path))
    with Board(port=psram_board.port, out=lambda *a: None) as board:
        link = board.start_link()
        link.request(P.LOAD_MODEL, {"config": meta["config"]}, arrays)
        head, _ = link.request(P.TRAIN_STEP, {"optimizer": "sgd", "lr": 0.05},
                               {"x": X, "labels": labels})
        _, tuned = link.request(P.GET_WEIGHTS)
    reference = {k: v.astype(np.float64) for k, v in arrays.items()}
    loss = train_step(meta["config"], reference, SGD(lr=0.05), X.astype(np.float64), labels)
    error = max(relative_error(tuned[k].astype(np.float64), reference[k]) for k in reference)
    if variant == "dropout":
        assert np.isfinite(head["loss"])
        assert error > 1e-3  # dropout made the step differ
    else:
        assert abs(head["loss"] - loss) <= 1e-4 * max(1.0, abs(loss))
        assert error <= 1e-4
    modelfile.write_model(tmp_path / "tuned.bin", "sequential", {"config": meta["config"]}, tuned)
    assert main(["export-torch", str(tmp_path / "tuned.bin"), "-o", str(tmp_path / "tuned.npz"),
                 "--layers", str(FIXTURES / variant / "layers.json")]) == 0
    back = read_state_dict(tmp_path / "tuned.npz")
    assert {k: list(v.shape) for k, v in back.items()} == torch_keys
    assert not np.array_equal(back["head.weight"], read_state_dict(
        FIXTURES / variant / "model.npz")["head.weight"])  # the step changed it
