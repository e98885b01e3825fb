"""Bad arguments at the public API get a ValueError naming the argument; the NaN policy
(docs/device-api.md, "NaN and infinity"): Dataset and the optimizers refuse non-finite
input, train stops at the first non-finite loss or gradient with the weights of the last good
step (tests/board/case_bad_input.py on the board)."""

from board_cases import board_test

NAMED = {  # each bad call of case_bad_input.calls(), and what its ValueError must name
    "Attention use_bias": "use_bias", "Attention dropout": "dropout",
    "Attention checkpoint": "checkpoint", "Attention seed": "seed",
    "forward causal": "causal", "Dense use_bias": "use_bias", "Dense seed": "seed",
    "Sequential layers": "layers", "Sequential a layer": "layers",
    "from_config entry": "config entry 0", "from_config list": "config",
    "padding_mask lengths": "lengths", "padding_mask seq_len": "seq_len",
    "SGD params": "params", "SGD lr str": "lr", "SGD lr inf32": "lr", "SGD lr zero": "lr",
    "SGD momentum": "momentum", "SGD weight_decay": "weight_decay", "Adam eps": "eps",
    "Adam beta1": "beta1", "Dataset X": "X must", "Dataset NaN": "NaN or infinity",
    "Dataset inf": "NaN or infinity", "Dataset label": "y[0]", "Dataset y": "y must",
    "split ratio": "test_ratio", "train data": "data a Dataset", "train epochs": "epochs",
    "train lr": "lr", "train log": "log a function", "save model": "model must",
    "save path": "path", "load path": "path",
}


def make_fixtures():
    return {"named": {"named": NAMED}}


test_bad_input_on_board = board_test("case_bad_input", make_fixtures)
