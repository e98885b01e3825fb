"""make run's words (issue 38): a legend names every column of the batch table, and the
summary speaks of device resets only when there were some."""

import re

from tinyattn_host.checks.run_check import LEGEND, BatchResult, Summary


def summary(resets):
    s = Summary(batches=[BatchResult("trained", 0, 16, 1e-6, 16, 16, 16, 100, 10, 1e-4)],
                train_step={"ok": True, "max_err": 3e-8}, resets=resets, seconds=1.0)
    return s.line()


def test_resets_are_named_only_when_there_were_some():
    assert "reset" not in summary(0)
    assert "; 1 device reset(s) survived; 1.0 s" in summary(1)


def test_the_legend_names_each_column_of_the_header():
    header = ["float|err|", "agree", "int8 exact", "int8~flt", "us"]
    text = " ".join(LEGEND)
    for column in header:
        assert re.search(r"(^| )%s:" % re.escape(column), text), column
    assert all(len(line) <= 100 for line in LEGEND)
