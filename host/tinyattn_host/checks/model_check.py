"""Check a model file on the board: `.venv/bin/python -m tinyattn_host check-model MODEL X.npy`.

The model (a tinyattn model file, e.g. from import-torch) is loaded on the device over the
link, the input rows go in batches, and every batch's output is compared with the float64
reference: relative error max |device - reference| / max(1, max |reference|) <= 1e-4.
"""

import numpy as np

from .. import modelfile, protocol
from ..board.board import Board
from ..board.ports import choose
from ..errors import bad_file_is_input_error
from .digits_check import TOLERANCE, relative_error
from ..reference.sequential import sequential_forward


def check_model(link, model_path, X, batch_size=16, out=print):
    """Load `model_path` on the device behind `link`, push X (rows, features); returns
    (ok, worst relative error)."""
    _, meta, arrays = modelfile.read_model(model_path)
    config = meta["config"]
    params = {k: v.astype(np.float64) for k, v in arrays.items()}
    link.request(protocol.LOAD_MODEL, {"config": config}, params)
    X = np.asarray(X, dtype=np.float32).astype(np.float64)
    want, _ = sequential_forward(config, params, X)
    worst = 0.0
    for start in range(0, len(X), batch_size):
        xb = X[start:start + batch_size]
        head, got = link.request(protocol.FORWARD, {}, {"x": xb})
        err = relative_error(got["logits"].astype(np.float64), want[start:start + len(xb)])
        worst = max(worst, err)
        out("rows %4d..%-4d  rel err %.2e  %6d us%s" % (start, start + len(xb) - 1, err,
                                                          head.get("us", 0),
                                                          "" if err <= TOLERANCE else "  <-- MISMATCH"))
    ok = worst <= TOLERANCE
    out("%s: %s on %d rows, max rel err %.2e (tolerance %.0e)"
        % ("PASS" if ok else "FAIL", model_path, len(X), worst, TOLERANCE))
    return ok, worst


def check_model_command(args):
    """The check-model command: exit status 0 when device and reference agree, 1 if not (or
    for a bad file), 2 for a board problem."""
    with bad_file_is_input_error():
        X = np.load(args.inputs)
        modelfile.read_model(args.model)  # a bad file is refused before the board is opened
    with Board(port=choose(args.port), deploy="auto") as board:
        ok, _ = check_model(board.start_link(), args.model, X, args.batch_size)
    return 0 if ok else 1
