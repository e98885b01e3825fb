"""Issue 20's quantize step in a board's heap: the user's PyTorch model (tests/fixtures/torch,
16 tokens x 12 features, two encoder layers of 32; each variant: relu, norm_first, gelu,
dropout 0.1) quantized by the board in a 2 MB heap, the
digits model in a 300 KB one (a board without PSRAM, a 32-bit port). The board's int8 outputs
must be the reference's (tinyattn_host.reference.sequential.int8_forward) on the int8 model
the board made, bit for bit. The heaps apply with a real ulab (MICROPYTHON=...); the stand-in's
heap means nothing, so there the same steps run in its own heap on fewer calibration rows."""

from pathlib import Path

import numpy as np
import pytest

from heap_budget import board_heap
from tinyattn_host import modelfile, protocol as P
from tinyattn_host.board.board import Board
from tinyattn_host.quantize import in_scale, quantize_tensor
from tinyattn_host.digits import DIGITS_CONFIG, init_params, load_digits
from tinyattn_host.interop.statedict import import_npz, read_description
from tinyattn_host.reference.sequential import int8_forward, int8_layers
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

TORCH = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
REAL_ULAB = unixport.has_ulab(unixport.interpreter())


def quantized_on_board(board, config, params, calibration, rows):
    """(the board's int8 outputs for the first `rows` calibration rows, the reference's on
    the int8 model the board made (QUANTIZE replies it), the calibration rows it took): all
    of them in one QUANTIZE (the board calibrates as many at once as fit its heap); while the
    board answers NO_MEMORY (the message and the model do not fit together), half as many on
    a fresh heap (the link restarted), as make run meets NO_MEMORY; the int8 forward runs on
    the first `rows` rows."""
    took = len(calibration)
    with Board(port=board.port, out=lambda *a: None) as connected:
        while True:
            link = connected.start_link()
            try:
                link.load_model(config, params)
                qhead, qarrays = link.quantize(calibration[:took])
                xq = quantize_tensor(calibration[:rows], in_scale(qhead["layers"]))
                head, got = link.request(P.FORWARD_INT8, {}, {"x": xq})
                break
            except P.ErrorReply as err:
                if err.code != P.wire.NO_MEMORY or took == 1:
                    raise
            took = (took + 1) // 2
            connected.stop_link()
    want = int8_forward(xq, int8_layers(qhead["layers"], qarrays))[-1]
    return got["y"].reshape(head["rows"], head["cols"]), want, took


@pytest.mark.parametrize("variant", ["base", "norm_first", "gelu", "dropout"])
def test_the_users_model_quantizes_in_a_2_mb_heap(start_virtual_board, tmp_path, variant):
    path = tmp_path / "model.bin"
    import_npz(TORCH / variant / "model.npz",
               read_description(TORCH / variant / "layers.json"), path)
    _, meta, arrays = modelfile.read_model(path)
    inputs = np.load(TORCH / "inputs.npy").astype(np.float32)
    calibration = inputs if REAL_ULAB else inputs[:2]  # 40 rows: what failed in 2 MB before
    board = start_virtual_board(heap="2m" if REAL_ULAB else None)
    # all 40 rows in one QUANTIZE: calibrated 16 at a time
    got, want, took = quantized_on_board(board, meta["config"], arrays, calibration, rows=2)
    assert got.shape == (2, 9) and took == len(calibration)
    np.testing.assert_array_equal(got, want)


def test_the_digits_model_quantizes_in_300k_on_a_32_bit_port(start_virtual_board):
    board = start_virtual_board(heap=board_heap("300k") if REAL_ULAB else None)
    X, _ = load_digits()
    params = {k: v.astype(np.float32) for k, v in init_params(DIGITS_CONFIG, seed=7).items()}
    calibration = X[:128 if REAL_ULAB else 8].astype(np.float32)
    got, want, took = quantized_on_board(board, DIGITS_CONFIG, params, calibration, rows=8)
    # more than one calibration batch of 16 (the host's estimate once sent 1 row; issue 37)
    assert got.shape == (8, 10) and took >= (32 if REAL_ULAB else len(calibration))
    np.testing.assert_array_equal(got, want)
