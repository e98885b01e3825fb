"""The device's digits loader against the host's split; the digits model's config; and, with a
real ulab only, the whole training run (a measurement, minutes long: docs/device-api.md,
*Digits*) (tests/board/case_digits.py and case_digits_train.py on the board)."""

from board_cases import board_test
from tinyattn_host.digits import DIGITS_CONFIG, DIGITS_CSV, load_digits
from tinyattn_host.reference.training import split_indices

ROWS = 40


def make_fixtures():
    X, y = load_digits()
    train_rows, test_rows = split_indices(ROWS, 0.2, 7)
    head = "".join(DIGITS_CSV.read_text().splitlines(True)[:ROWS + 1])  # header + 40 rows
    return {
        "digits40.csv": head.encode(),
        "iris.csv": b"150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,0\n",
        "split": {"train_pixels": X[train_rows] * 16, "train_y": y[train_rows].tolist(),
                  "test_pixels": X[test_rows] * 16, "test_y": y[test_rows].tolist()},
        "model": {"config": DIGITS_CONFIG},
    }


test_digits_on_board = board_test("case_digits", make_fixtures)

STANDIN_HOURS = "minutes with real ulab, hours with the stand-in: MICROPYTHON=..."
test_digits_training_on_board = board_test(
    "case_digits_train", lambda: {"digits.csv": DIGITS_CSV.read_bytes()}, needs_ulab=STANDIN_HOURS)
