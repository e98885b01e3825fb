"""The host-driven check behind `make run`: Iris batches to the device, answers to the reference.

Two models, a seeded random-init one and one trained on the host (reference training, Adam):
each is loaded on the device and quantized there (calibration: all 150 samples); all 150
samples go through its float and int8 paths in batches, one FORWARD a batch (logits compared
with the float64 reference: max abs error, class agreement; the int8 output bit for bit with
the integer reference on the input as the device quantized it). One training step is checked
too. tests/e2e/test_run_requests.py counts the requests.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from . import digits_check
from .heap_replies import HeapReplies
from ..quantize import quantize_tensor
from .run_report import write_report
from ..board.board import Board
from ..board.ports import choose
from ..errors import UsageError
from .progress import Progress
from ..reference.sequential import int8_forward, int8_layers, sequential_forward
from ..reference.training import SGD, Adam, accuracy, train, train_step
from ..device_modules import device_module
from ..interop.statedict import param_shapes

IRIS = device_module("datasets/iris")
IRIS_CONFIG = IRIS.CONFIG  # the board's (the check compares it with LOAD_MODEL's reply)
FLOAT_TOLERANCE = 1e-4  # |device - reference| <= 1e-4 * max(1, max |reference|): float32
TRAIN_STEP_LR = 0.05


@dataclass
class BatchResult:
    model: str
    batch: int
    rows: int
    float_max_err: float
    float_agree: int
    int8_exact: int
    int8_agree_float: int
    us_float: int
    us_int8: int

    @property
    def ok(self):
        return bool(self.float_agree == self.rows and self.int8_exact == self.rows
                    and self.float_max_err <= self.tolerance)

    tolerance: float = 0.0


LEGEND = ("float|err|: max |board - reference| of a batch's float logits;",
          "agree: rows whose class is the reference's; us: the board's time for a batch;",
          "int8 exact: rows whose int8 outputs are the integer reference's, bit for bit;",
          "int8~flt: rows whose int8 class is the float class")
"""What the batch table's columns are, printed above it (the digits and vowels tables use
the same words)."""


@dataclass
class Summary:
    device: dict = field(default_factory=dict)
    batches: list = field(default_factory=list)
    train_step: dict = field(default_factory=dict)
    training: dict = field(default_factory=dict)  # the trained model's host training history
    resets: int = 0
    seconds: float = 0.0
    digits: dict = field(default_factory=dict)  # digits_check.check_digits, when run
    vowels: dict = field(default_factory=dict)  # vowels_check.check_vowels, when run
    reduced: list = field(default_factory=list)  # what the board ran in pieces (Check.said)

    @property
    def ok(self):
        return bool(self.batches) and all(b.ok for b in self.batches) \
            and self.train_step.get("ok", False) and self.digits.get("ok", True) \
            and self.vowels.get("ok", True)

    def line(self):
        rows = sum(b.rows for b in self.batches)
        worst = max((b.float_max_err for b in self.batches), default=float("nan"))
        agree = sum(b.float_agree for b in self.batches)
        exact = sum(b.int8_exact for b in self.batches)
        digits = "%s; " % digits_check.summary_line(self.digits) if self.digits else ""
        if self.vowels:
            from .vowels_check import summary_line

            digits += "%s; " % summary_line(self.vowels)
        reduced = "; %d request size(s) cut to fit the heap" % len(self.reduced) \
            if self.reduced else ""
        return ("%s: float max |err| %.2e, classes agree %d/%d; int8 bit-exact %d/%d; "
                "train step max |err| %.2e; %s%s%.1f s%s"
                % ("PASS" if self.ok else "FAIL", worst, agree, rows, exact, rows,
                   self.train_step.get("max_err", float("nan")), digits,
                   "%d device reset(s) survived; " % self.resets if self.resets else "",
                   self.seconds, reduced))


# ---- data and models ---------------------------------------------------------------------
def iris():
    """(X standardised (150, 4) float32-exact, y) from the device package's bundled Iris."""
    rows = [IRIS.record(i) for i in range(IRIS.COUNT)]
    X = np.array([features for features, _ in rows])
    y = np.array([label for _, label in rows])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X.astype(np.float32).astype(np.float64), y


def random_model(seed):
    """Parameters for IRIS_CONFIG: Xavier-uniform weights and small random biases."""
    rng = np.random.default_rng(seed)
    params = {}
    for i, spec in enumerate(IRIS_CONFIG):
        for name, shape in param_shapes(spec).items():
            bound = np.sqrt(6.0 / sum(shape)) if len(shape) == 2 else 0.1
            params["%d.%s" % (i, name)] = rng.uniform(-bound, bound, shape)
    return _float32(params)


def trained_model(X, y, seed, epochs=30):
    """(parameters, history): trained on the host; history has the loss and the accuracy
    on the training rows after every epoch."""
    params = random_model(seed)
    history = {"loss": [], "accuracy": []}

    def on_epoch(epoch, loss):
        history["loss"].append(float(loss))
        history["accuracy"].append(accuracy(IRIS_CONFIG, params, X, y))

    train(IRIS_CONFIG, params, X, y, epochs=epochs, batch_size=16, seed=seed,
          optimizer=Adam(lr=0.01), on_epoch=on_epoch)
    return _float32(params), history


def _float32(params):
    """What the device holds: every parameter rounded to float32."""
    return {k: np.asarray(v, dtype=np.float32).astype(np.float64) for k, v in params.items()}


def reference_qlayers(head, arrays):
    """The integer reference's layer dicts from a QUANTIZE reply (specs and buffers)."""
    return int8_layers(head["layers"], arrays)


# ---- the check ---------------------------------------------------------------------------
class Check(HeapReplies):
    """Runs the whole check over `board` (a board.Board with its link started)."""

    def __init__(self, board, batch_size=16, seed=42, out=print, progress=True,
                 on_batch=None, digits=False, vowels=False):
        self.board = board
        self.digits = digits  # the digits model too (digits_check.py): True, or a row count
        self.vowels = vowels  # the vowels model too (vowels_check.py): True, or a row count
        self.batch_size = batch_size
        self.seed = seed
        self._out = out
        # a Progress, or True for one on stderr when that is a terminal
        self.progress = Progress() if progress is True else progress or None
        self.on_batch = on_batch  # a hook for tests: called with (model name, batch index)
        self.summary = Summary()
        self.samples = {}  # for the report: per model, device and reference outputs

    def run(self):
        start = time.monotonic()
        link = self.board.link or self.board.start_link()  # its HELLO done
        self.summary.device = link.info
        X, y = iris()
        trained, self.summary.training = trained_model(X, y, self.seed)
        models = [("random", random_model(self.seed)), ("trained", trained)]
        for line in LEGEND:
            self.out(line)
        self.out("%-8s %5s %4s %12s %7s %11s %9s %9s %9s"
                 % ("model", "batch", "rows", "float|err|", "agree", "int8 exact",
                    "int8~flt", "float us", "int8 us"))
        for name, params in models:
            self._check_model(name, params, X)
        self._check_train_step(models[0][1], X, y)
        if self.digits:
            rows = None if self.digits is True else self.digits
            self.summary.digits = digits_check.check_digits(self, rows)
        if self.vowels:
            from .vowels_check import check_vowels

            rows = None if self.vowels is True else self.vowels
            self.summary.vowels = check_vowels(self, rows)
        self.summary.seconds = time.monotonic() - start
        return self.summary

    def _check_model(self, name, params, X):
        def load():
            head = self.board.link.load_model(IRIS_CONFIG, params)
            if head["config"] != IRIS_CONFIG:
                raise RuntimeError("the device's model config %r is not the harness's %r"
                                   % (head["config"], IRIS_CONFIG))
            return self.board.link.quantize(X)  # calibration: all the rows

        qhead, qarrays = self.retry(lambda link: load())
        self.said(name, "quantize", qhead, len(X))
        qlayers = reference_qlayers(qhead, qarrays)
        ref_logits, caches = sequential_forward(IRIS_CONFIG, params, X)
        attention_ref = next(c for c in caches if isinstance(c, dict))["A_cache"]
        keep = self.samples.setdefault(name, {"device": [], "reference": [], "attention": None,
                                              "tolerance": FLOAT_TOLERANCE * max(
                                                  1.0, float(np.abs(ref_logits).max())),
                                              "int8": [],
                                              "maps": attention_ref,
                                              "classes": ref_logits.argmax(1)})
        batch = self.batch_size
        starts = range(0, len(X), batch)
        for index, start in enumerate(starts):
            if self.on_batch:
                self.on_batch(name, index)
            xb = X[start:start + batch]
            want = ref_logits[start:start + len(xb)]
            first = index == 0
            fhead, got = self.retry(lambda link: link.forward(xb, attention=first, int8=True),
                                    reload=load)
            self.said(name, "forward", fhead, len(xb))
            logits = got["logits"].astype(np.float64)
            xq = got["xq"].reshape(xb.shape)  # the int8 input as the device quantized it
            s_out = fhead["out_scale"]
            yq = got["y"].reshape(fhead["rows"], fhead["cols"])
            yq_ref = int8_forward(xq, qlayers)[-1]
            # its quantization agrees with the host's to a step (float32 against float64 at
            # a tie); every row's integer output is then exactly the reference's
            quantized = np.abs(xq.astype(int) - quantize_tensor(xb, fhead["in_scale"])) <= 1
            tolerance = FLOAT_TOLERANCE * max(1.0, np.abs(want).max())
            result = BatchResult(
                model=name, batch=index, rows=len(xb),
                float_max_err=float(np.abs(logits - want).max()),
                float_agree=int(np.sum(logits.argmax(1) == want.argmax(1))),
                int8_exact=int(np.sum(np.all(yq == yq_ref, axis=1) & np.all(quantized, axis=1))),
                int8_agree_float=int(np.sum((yq * s_out).argmax(1) == want.argmax(1))),
                us_float=fhead.get("us", 0), us_int8=fhead.get("int8_us", 0),
                tolerance=float(tolerance))
            self.summary.batches.append(result)
            keep["device"].append(logits)
            keep["reference"].append(want)
            keep["int8"].append(yq * s_out)
            if first:
                rows = got["attention"].shape[0]
                keep["attention"] = (got["attention"], attention_ref[:rows])
            self._show(result, index, len(starts))

    def _check_train_step(self, params, X, y):
        """One SGD step on the device and on the reference; the weights read back agree."""
        self.board.link.load_model(IRIS_CONFIG, params)
        rows = slice(0, self.batch_size)
        head = self.board.link.train_step(X[rows], y[rows], "sgd", TRAIN_STEP_LR)
        self.said("random", "train", head, len(X[rows]))
        _, weights = self.board.link.get_weights()
        reference = dict(params)
        loss = train_step(IRIS_CONFIG, reference, SGD(lr=TRAIN_STEP_LR), X[rows], y[rows])
        err = max(float(np.abs(weights[k] - reference[k]).max()) for k in reference)
        scale = max(float(np.abs(reference[k]).max()) for k in reference)
        ok = err <= FLOAT_TOLERANCE * max(1.0, scale) and abs(head["loss"] - loss) <= 1e-4
        self.summary.train_step = {"max_err": err, "loss_device": head["loss"],
                                   "loss_reference": float(loss), "ok": bool(ok)}
        self.out("train step: loss %.6f (reference %.6f), weights max |err| %.2e  %s"
                 % (head["loss"], loss, err, "ok" if ok else "MISMATCH"))

    def out(self, line):
        """Print a line of the report (the progress line goes first, and comes back after)."""
        if self.progress:
            self.progress.clear()
        self._out(line)

    def _show(self, r, index, total):
        self.out("%-8s %5d %4d %12.2e %4d/%-3d %7d/%-3d %5d/%-3d %9d %9d%s"
                 % (r.model, r.batch, r.rows, r.float_max_err, r.float_agree, r.rows,
                    r.int8_exact, r.rows, r.int8_agree_float, r.rows, r.us_float, r.us_int8,
                    "" if r.ok else "  <-- MISMATCH"))
        if self.progress and index + 1 < total:
            self.progress.show(index + 1, total, r.model)


# ---- the report --------------------------------------------------------------------------
def run_command(args):
    """The run command (`make run`): the Check on the board; exit status 0 only when all agree."""
    if args.batch_size < 1:
        raise UsageError("--batch-size must be at least 1")
    port = choose(args.port)
    if args.heap and port is not None:
        raise UsageError("--heap sizes the virtual board's heap; %s is a board" % port)
    with Board(port=port, flash_dir=args.flash, deploy=args.deploy, heap=args.heap) as board:
        info = board.info
        print("device: MicroPython %s, ulab %s, tinyattn %s, %d bytes free"
              % (info["micropython"], info["ulab"], info["tinyattn"], info["free"]))
        run = Check(board, batch_size=args.batch_size, seed=args.seed,
                    digits=True if args.digits_rows is None else args.digits_rows,
                    vowels=True if args.vowels_rows is None else args.vowels_rows)
        summary = run.run()
    print(summary.line())
    if args.report:
        for path in write_report(args.report, summary, run.samples):
            print("wrote %s" % path)
    return 0 if summary.ok else 1
