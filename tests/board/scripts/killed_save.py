"""A save killed midway (tests/device/test_store.py), run on the unix port by the host.

    micropython killed_save.py save PATH    save iris_model(1) to PATH, then start saving
                                            iris_model(2) over it and stall after 600 bytes,
                                            printing 'midway': the host kills the interpreter
    micropython killed_save.py check PATH   PATH still holds iris_model(1), bit for bit, and
                                            loading the partial PATH.tmp fails as truncated

The host must act on the running interpreter (SIGKILL in the middle of a write), so this
cannot be a board case.
"""

import sys
import time

from tinyattn import iris_model, load, save, store


class SlowFile:
    """A file that stops for good after 600 bytes, so the host can kill the interpreter there."""

    def __init__(self, f):
        self.f, self.written = f, 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        self.f.write(data)
        self.written += len(data)
        if self.written > 600:
            self.f.flush()
            print("midway")
            time.sleep(60)


def save_and_stall(path):
    save(iris_model(1), path)
    store.open = lambda name, mode: SlowFile(open(name, mode))
    save(iris_model(2), path)
    print("finished")


def check(path):
    model, first = load(path), iris_model(1)
    for (name, p, _), (_, q, _) in zip(model.collect_params(), first.collect_params()):
        assert p.tolist() == q.tolist(), "%s differs from iris_model(1)'s" % name
    assert len(model.collect_params()) == 12, "%d arrays" % len(model.collect_params())
    try:
        load(path + ".tmp")
    except ValueError as err:
        assert "truncated" in str(err), str(err)
    else:
        raise AssertionError("the partial file loaded")
    print("ok")


if __name__ == "__main__":
    {"save": save_and_stall, "check": check}[sys.argv[1]](sys.argv[2])
