"""The int8 masked pooling kernel (int8/kernels_pool.py) bit for bit with reference.int8.masked_pool:
every kept count 0..S, the extreme int8 values, the multipliers of real scales; and the bad
input of the masked int8 path (tests/board/case_qpool.py on the board)."""

import numpy as np

from board_cases import board_test
from tinyattn_host.reference import int8 as ref


def make_fixtures():
    rng = np.random.default_rng(2122)
    S, cols = 7, 5
    lengths = list(range(S + 1)) + [S, 1]  # 0 (no kept token: zeros) to S
    B = len(lengths)
    x = rng.integers(-128, 128, (B * S, cols)).astype(np.int8)
    x[:S] = -128  # a row of sequence 0 (length 0) ...
    x[S * S:S * (S + 1)] = -128  # the all-kept extremes: the largest negative sums
    x[S * (S + 1):S * (S + 2)] = 127
    keep = (np.arange(S)[None, :] < np.array(lengths)[:, None]).astype(np.uint8)
    keep[-1] = 0
    keep[-1, 3] = 1  # one kept token that is not the first
    s_x, s_y = 0.05, 0.03
    mults = [list(ref.fixed_point(s_x / n / s_y, 128)) for n in range(1, S + 1)]
    want = ref.masked_pool(x, S, keep, mults)
    assert np.all(want[0] == 0) and want.min() == -128 and want.max() == 127
    return {"pool": {"S": S, "cols": cols, "B": B, "mults": mults, "want": want.tolist()},
            "x.bin": x.tobytes(), "keep.bin": keep.tobytes()}


test_qpool_on_board = board_test("case_qpool", make_fixtures)
