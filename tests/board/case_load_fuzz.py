"""The loaders against crafted files (tests/device/test_load_fuzz.py makes them): `load` and
`int8.load` each refuse a file with one ValueError line naming it, or give a model whose
forward runs on rows of the width its layers take."""

import check
from tinyattn import load
from tinyattn.int8.model_load import load as int8_load
from tinyattn.int8.spec import float_config
from tinyattn.nn.flow import follow
from ulab import numpy as np


def _input(config):
    """Rows for a config: two samples of the width its layers take."""
    width, rows, _ = follow(config)
    if width is None:
        width = 1
        for entry in config:
            if entry[0] == "Tokens":
                width *= entry[1]
    return np.array([[((i * 5 + j * 3) % 7) / 4.0 - 0.75 for j in range(width)]
                     for i in range(2 * rows)])


def _float_forward(model):
    return model.forward(_input(model.config()), False)


def _int8_forward(model):
    return model.forward(_input(float_config(model.description()["layers"])))


def test_crafted_files_are_refused_in_one_line_or_load_and_run():
    problems, counts = [], {"loaded": 0, "refused": 0}
    for name in check.fixture("fuzz")["names"]:
        path = check.path(name)
        for what, loader, forward in (("load", load, _float_forward),
                                      ("int8.load", int8_load, _int8_forward)):
            try:
                model = loader(path)
            except ValueError as err:
                text = str(err)
                if path not in text or "\n" in text:
                    problems.append("%s %s: %r" % (name, what, text))
                counts["refused"] += 1
                continue
            except Exception as err:
                problems.append("%s %s: %s: %s" % (name, what,
                                                   type(err).__name__, err))
                continue
            counts["loaded"] += 1
            try:
                forward(model)
            except Exception as err:
                problems.append("%s %s loads but its forward fails: %s: %s"
                                % (name, what, type(err).__name__, err))
    print("load fuzz:", counts)
    if problems:
        raise AssertionError("%d problems: %s" % (len(problems), "; ".join(problems[:6])))
    assert counts["loaded"] > 0 and counts["refused"] > 0, counts
