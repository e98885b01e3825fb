"""SGD and Adam: update the parameters in place, with no new arrays per step.

Both take the (name, param, grad) groups of `collect_params()`. State and work
arrays (the work arrays shared by parameters of one shape) are allocated at construction;
`step()` works with in-place ulab operations only.
"""

import math

from ulab import numpy as np


FLOAT32_MAX = 3.4028234663852886e38  # the parameters are float32 on a board


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def hyper(name, value, ok, wanted):
    """value, or ValueError naming it when `ok` is false (NaN fails every comparison)."""
    if not ok:
        raise ValueError("%s must be %s, got %r" % (name, wanted, value))
    return value


class _Optimizer:
    def __init__(self, params, lr):
        if hasattr(params, "collect_params") or not isinstance(params, (list, tuple)) \
                or not params:
            raise ValueError("params must be model.collect_params(), got %r%s" % (
                params, " (no parameters to optimize)" if params == [] else ""))
        self.groups = list(params)
        self.lr = hyper("lr", lr, _number(lr) and 0 < lr <= FLOAT32_MAX,
                        "a finite number > 0 (at most float32's largest)")
        self._work = {}
        for _, param, _ in self.groups:
            self._work_array(param.shape)

    def _work_array(self, shape, which=0):
        """A work array of this shape, made once and shared by parameters of that shape."""
        key = (shape, which)
        work = self._work.get(key)
        if work is None:
            work = self._work[key] = np.zeros(shape)
        return work

    def zero_grad(self):
        """Set every gradient to zero."""
        for _, _, grad in self.groups:
            grad[:] = 0.0


class SGD(_Optimizer):
    """p -= lr * u with u = g + weight_decay * p, or with momentum m: buf = m * buf + u, u = buf."""

    def __init__(self, params, lr, momentum=0.0, weight_decay=0.0):
        super().__init__(params, lr)
        self.momentum = hyper("momentum", momentum, _number(momentum) and 0 <= momentum < 1,
                              "a number in [0, 1)")
        self.weight_decay = hyper("weight_decay", weight_decay, _number(weight_decay)
                                  and 0 <= weight_decay <= FLOAT32_MAX, "a finite number >= 0")
        self.velocity = None
        if momentum:
            self.velocity = [np.zeros(p.shape) for _, p, _ in self.groups]
            for _, param, _ in self.groups:
                self._work_array(param.shape, 1)

    def step(self):
        """One update of every parameter from its gradient."""
        # Lasting arrays change only by += and -=: MicroPython runs `a *= c` on a Python
        # class (the ulab stand-in) as `a = a * c`, so only work arrays get scaled.
        for i, (_, param, grad) in enumerate(self.groups):
            u = self._work_array(param.shape)
            u[:] = param
            u *= self.weight_decay
            u += grad
            if self.velocity is not None:
                buf, w = self.velocity[i], self._work_array(param.shape, 1)
                w[:] = buf
                w *= self.momentum - 1.0
                w += u
                buf += w  # buf = momentum * buf + u
                u[:] = buf
            u *= self.lr
            param -= u


class Adam(_Optimizer):
    """Adam (Kingma and Ba), with bias correction.

    m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  t counts the steps;
    p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
    """

    def __init__(self, params, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
        super().__init__(params, lr)
        self.beta1 = hyper("beta1", beta1, _number(beta1) and 0 <= beta1 < 1, "a number in [0, 1)")
        self.beta2 = hyper("beta2", beta2, _number(beta2) and 0 <= beta2 < 1, "a number in [0, 1)")
        self.eps = hyper("eps", eps, _number(eps) and 0 < eps <= FLOAT32_MAX, "a finite number > 0")
        self.t = 0
        self.m = [np.zeros(p.shape) for _, p, _ in self.groups]
        self.v = [np.zeros(p.shape) for _, p, _ in self.groups]
        for _, param, _ in self.groups:
            self._work_array(param.shape, 1)

    def step(self):
        """One update of every parameter from its gradient."""
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        step_size = self.lr / (1.0 - b1 ** self.t)
        v_scale = 1.0 / math.sqrt(1.0 - b2 ** self.t)
        # m, v and p change only by += and -= (see SGD.step); u and d are work arrays
        for i, (_, param, grad) in enumerate(self.groups):
            m, v = self.m[i], self.v[i]
            u, d = self._work_array(param.shape), self._work_array(param.shape, 1)
            u[:] = grad
            u -= m
            u *= 1.0 - b1
            m += u  # m = b1 m + (1 - b1) g
            u[:] = grad
            u *= grad
            u -= v
            u *= 1.0 - b2
            v += u  # v = b2 v + (1 - b2) g^2
            d[:] = v
            d **= 0.5
            d *= v_scale
            d += self.eps
            u[:] = m
            u /= d
            u *= step_size
            param -= u
