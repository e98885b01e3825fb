"""tinyattn.scaled_dot_product_attention and its backward against PyTorch on random cases
(grouped-query heads, shared and per-block biases, softcap, causal offsets, padding and keep
masks: tests/fixtures/sdpa/torch.*, written by tests/device/test_sdpa.py as torchNN), and the
one ValueError each bad argument gets."""

import check
from case_sdpa import call, read_arrays
from tinyattn import scaled_dot_product_attention as sdpa
from tinyattn import scaled_dot_product_attention_backward as sdpa_backward
from ulab import numpy as np

ARGUMENTS = ("mask", "keep", "bias")


def run_torch_case(name):
    fx = check.fixture(name)
    a = read_arrays(name, fx)
    args = dict(fx["args"])
    check.close(call(a, args), a["y"], rtol=1e-5, what=name + " y")
    for key in ARGUMENTS:
        if key in a:
            args[key] = a[key]
    grads = sdpa_backward(a["grad_out"], a["q"], a["k"], a["v"], **args)
    for key, got in zip(("dq", "dk", "dv", "dbias"), grads):
        if key not in a:
            check.equal(got is None, True, name + " no dbias without a bias")
            continue
        check.rel_error_below(got, a[key], 1e-4, what="%s %s" % (name, key))


def test_forward_and_backward_equal_torch():
    check.every(run_torch_case, check.names("torch"))


def test_backward_holds_no_heap_after():
    name = check.names("torch")[-1]
    fx = check.fixture(name)
    a = read_arrays(name, fx)
    args = dict(fx["args"])
    for key in ARGUMENTS:
        if key in a:
            args[key] = a[key]
    check.heap_returns(lambda: sdpa_backward(a["grad_out"], a["q"], a["k"], a["v"], **args),
                       what="scaled_dot_product_attention_backward")


def test_each_bad_argument_gets_one_clear_error():
    q, k, v = np.zeros((6, 8)), np.zeros((10, 4)), np.zeros((10, 6))  # B 2, S 3, S_kv 5
    good = dict(seq_len=3, num_heads=4, num_kv_heads=2)
    cases = [
        (dict(q=np.zeros(8)), "q must be a 2-D ulab array"),
        (dict(seq_len=4), "q has 6 rows, not a multiple of the sequence length 4"),
        (dict(seq_len=0), "sequence length must be a positive int"),
        (dict(num_heads=3), "q has 8 columns, not a multiple of num_heads=3"),
        (dict(num_heads=True), "num_heads must be an int >= 1"),
        (dict(num_kv_heads=3), "k has 4 columns, not a multiple of num_kv_heads=3"),
        (dict(num_heads=2, num_kv_heads=4, k=np.zeros((10, 16))),
         "num_kv_heads=4 does not divide num_heads=2"),
        (dict(k=np.zeros((10, 8))), "k's heads have 4 columns, q's 2"),
        (dict(v=np.zeros((10, 5))), "v has 5 columns, not a multiple of num_kv_heads=2"),
        (dict(v=np.zeros((8, 6))), "v must have k's 10 rows, got 8"),
        (dict(k=np.zeros((9, 4))), "k has 9 rows: not one sequence of keys"),
        (dict(kv_len=4), "k must have B*kv_len = 2*4 rows, got 10"),
        (dict(mask=np.zeros((2, 4))), "mask must have shape (2, 5) (batch, keys)"),
        (dict(mask=np.zeros((2, 5)) + 0.5), "mask must hold only 0 (padding) and 1 (a key)"),
        (dict(keep=np.zeros((5, 3))), "keep must have shape (3, 5) (queries, keys)"),
        (dict(keep=np.zeros((3, 5)) + 2.0), "keep must hold only 0 and 1"),
        (dict(bias=np.zeros((3, 4))), "bias must have shape (3, 5) or (B*H*S, S_kv) = (24, 5)"),
        (dict(bias=np.zeros((3, 5)) + float("inf")), "bias must be finite"),
        (dict(causal=1), "causal must be True or False"),
        (dict(causal_offset=0.5), "causal_offset must be an int"),
        (dict(scale=float("nan")), "scale must be a finite number"),
        (dict(scale="1"), "scale must be a finite number"),
        (dict(softcap=-1.0), "softcap must be a finite number >= 0"),
    ]
    for change, want in cases:
        kw = dict(good, q=q, k=k, v=v)
        kw.update(change)
        args = (kw.pop("q"), kw.pop("k"), kw.pop("v"))
        got = check.message(ValueError, sdpa, *args, **kw)
        if want not in got:
            raise AssertionError("%r: %r, expected %r" % (change, got, want))
    got = check.message(ValueError, sdpa_backward, np.zeros((6, 6)), q, k, v, **good)
    if "grad_out must have the output's shape (6, 12)" not in got:
        raise AssertionError("grad_out: %r" % got)


def test_rows_with_no_key_are_zero():
    """ONNX's rule (a causal offset of -2 leaves rows 0 and 1 of each sequence no key)."""
    q = np.array([[0.5, -1.0], [1.0, 2.0], [0.25, 0.5], [-1.0, 1.5]])
    k = np.array([[1.0, 0.5], [2.0, -1.0], [0.0, 1.0], [1.0, 1.0]])
    y = sdpa(q, k, k * 2.0, 4, 1, causal=True, causal_offset=-2)
    check.equal(y[:2, :], [0.0] * 4, "rows 0 and 1")
    check.close(y[2:3, :], k[0:1, :] * 2.0, rtol=1e-6, what="row 2 sees key 0 only")
