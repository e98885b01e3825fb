"""Cases: element-wise functions, reductions, dot."""

from ulab import numpy as np

from registry import A, B, V, a, case, path, u8  # noqa: F401


@case
def elementwise():
    x, p = a(), np.array([0.5, 1, 4])
    return [np.exp(x), np.log(p), np.sqrt(p), np.tanh(x), np.sin(x), np.cos(x), np.exp(u8()),
            np.floor(np.array([1.5, -1.5, 2.0])), np.exp([1, 2]), np.exp((1, 2)), np.sin(1.0),
            np.sqrt(4), np.floor(2.5), np.log(np.array([0.0, -1.0])), np.sqrt(np.array([-1.0]))]


@case
def around_():
    return [np.around(np.array([0.5, 1.5, 2.5, -0.5, -1.5])),
            np.around(np.array([1.26, -1.5, 2.5]), decimals=1),
            np.around(np.array([123.0, 1250.0]), decimals=-2), np.around(u8())]


@case
def around_scalar():
    return np.around(2.5)


@case
def maximum_minimum_clip():
    x = a()
    return [np.maximum(x, 0), np.minimum(x, 0), np.maximum(x, np.array([0.0, 0, 10])),
            np.maximum(np.array([1.0, 5]), np.array([3.0, 2])), np.minimum(1, 2),
            np.maximum(1.5, 1),
            np.maximum(u8(), 2), np.maximum(u8(), 2.5), np.maximum([1.0, 5], 2),
            np.clip(x, -1, 2), np.clip(np.array([1.0, 5]), 4, 2), np.clip(u8(), 0, 1),
            np.clip(np.array([1.0, 5, 9]), np.array([2.0, 2, 2]), 6), np.clip(5, 0, 2)]


@case
def where_():
    x = a()
    return [np.where(x > 0, x, 0), np.where(x > 0, x, np.array([0.0, 10, 20])),
            np.where(np.array([1.0, 0]) > 0.5, 1.5, 2.5), np.where(np.array([1, 0, 1]), 1, 0),
            np.where(u8(), u8(), 5), np.where([1, 0], np.array([1.0, 2]), 0)]


@case
def where_bad_shape():
    return np.where(np.array([1.0, 0, 1]) > 0, np.array([1.0, 2]), 0)


# ---- reductions and dot -------------------------------------------------------------------
@case
def reductions_float():
    x = a()
    out = []
    for f in (np.sum, np.mean, np.max, np.min, np.argmax, np.argmin, np.std, np.median):
        out.append([f(x), f(x, axis=0), f(x, axis=1), f(x, axis=-1), f(np.array(V)),
                    f(np.array(V), axis=0)])
    return out


@case
def reductions_int():
    x = np.array([[200, 1], [100, 2]], dtype=np.uint8)
    out = []
    for f in (np.sum, np.mean, np.max, np.min, np.argmax, np.argmin, np.std, np.median):
        out.append([f(x), f(x, axis=0), f(x, axis=1), f(x > 1),
                    f(np.array([-5, 3], dtype=np.int16))])
    return out


@case
def reductions_lists_and_more():
    return [np.sum([1, 2, 3]), np.max([1, 5, 3]), np.std(np.array([1.0, 2, 4]), ddof=1),
            np.std(a(), axis=1, ddof=1), np.median(np.array([4.0, 1, 3, 2])),
            np.argmin(np.array([2.0, 1, 1])), np.argmax(np.array([[1, 9], [3, 4]])),
            np.mean(np.array([])), np.sum(np.array([])), np.std(np.array([1.0]), ddof=1)]


@case
def reduction_bad_axis():
    return np.sum(a(), axis=2)


@case
def max_of_empty():
    return np.max(np.array([]))


@case
def dot_():
    x, y = a(), np.array(B)
    return [np.dot(x, y), np.dot(x, x.T), np.dot(x[:, 1:], y[1:, :]), np.dot(x.T, x),
            np.dot(np.array([1.0, 2]), np.array([3.0, 4])), np.dot(x, np.array([1.0, 1, 1])),
            np.dot(np.array([1.0, 1]), x), np.dot(np.array([[1, 2]], dtype=np.uint8),
                                                   np.array([[3], [4]], dtype=np.uint8))]


@case
def dot_mismatch():
    return np.dot(a(), a())


@case
def dot_scalar():
    return np.dot(np.array([1.0]), 2)
