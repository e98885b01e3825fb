"""Multi-head attention on ulab arrays, forward and backward (the spec's Attention layer).

Shapes: B sequences of S tokens are stored as (B*S, E), one token a row; head h is the
column range h*D:(h+1)*D with D = E/H. The attention weights of block (b, h) are rows
(b*H + h)*S ... of A_cache, the spec's [B*H, S, S] in two dimensions.
"""

import math

from ulab import numpy as np

from .rng import Rng
from .shapes import require_2d, require_rows

MASKED_SCORE = -1e9


class Attention:
    """Multi-head attention: y = concat_h(softmax(Q_h K_h^T / sqrt(D)) V_h) Wo^T + bo.

    Q = x Wq^T + bq, K = kv Wk^T + bk, V = kv Wv^T + bv, with kv = x for self-attention.
    Weights are Xavier-uniform from `seed`, biases zero. `dropout` drops attention weights
    (inverted dropout) when `forward(..., training=True)`; `checkpoint=True` keeps no
    attention weights between forward and backward and recomputes them.
    """

    def __init__(self, embed_dim, num_heads, use_bias=True, dropout=0.0, checkpoint=False,
                 seed=None):
        if not isinstance(embed_dim, int) or not isinstance(num_heads, int) \
                or embed_dim < 1 or num_heads < 1:
            raise ValueError("embed_dim and num_heads must be ints >= 1, got embed_dim=%r, "
                             "num_heads=%r" % (embed_dim, num_heads))
        if embed_dim % num_heads:
            raise ValueError("embed_dim=%d is not divisible by num_heads=%d"
                             % (embed_dim, num_heads))
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
            raise ValueError("dropout must be a number in [0, 1), got %r" % (dropout,))
        for name, flag in (("use_bias", use_bias), ("checkpoint", checkpoint)):
            if not isinstance(flag, bool):
                raise ValueError("%s must be True or False, got %r" % (name, flag))
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.use_bias = use_bias
        self.dropout = dropout
        self.checkpoint = checkpoint
        self._kept = 1.0 / (1.0 - dropout)  # inverted dropout scales what it keeps
        rng = Rng(seed)
        self._dropout_rng = Rng(rng.next32())
        bound = math.sqrt(6.0 / (embed_dim + embed_dim))
        E = embed_dim
        self.Wq, self.Wk, self.Wv, self.Wo = [
            rng.uniform_matrix(E, E, -bound, bound) for _ in range(4)]
        self.bq, self.bk, self.bv, self.bo = [
            np.zeros(E) if use_bias else None for _ in range(4)]
        self.dWq, self.dWk, self.dWv, self.dWo = [np.zeros((E, E)) for _ in range(4)]
        self.dbq, self.dbk, self.dbv, self.dbo = [
            np.zeros(E) if use_bias else None for _ in range(4)]
        self._clear_caches()

    def _clear_caches(self):
        self.x_cache = self.kv_cache = None
        self.Q_cache = self.K_cache = self.V_cache = None
        self.A_cache = self.ctx_cache = None
        self._layout = None
        self._dropout_state = None

    # ---- parameters --------------------------------------------------------------------
    def collect_params(self):
        """The (name, param, grad) groups an optimizer updates."""
        groups = []
        for name in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo"):
            param = getattr(self, name)
            if param is not None:
                groups.append((name, param, getattr(self, "d" + name)))
        return groups

    def zero_grad(self):
        """Set every gradient to zero."""
        for _, _, grad in self.collect_params():
            grad[:] = 0.0

    def num_params(self):
        """4E^2 + 4E parameters (4E^2 without bias)."""
        E = self.embed_dim
        return 4 * E * E + (4 * E if self.use_bias else 0)

    def cache_bytes(self, batch, seq_len, kv_len=None):
        """Bytes the training caches hold for this shape (float32), A_cache = B*H*S*S_kv."""
        S_kv = seq_len if kv_len is None else kv_len
        E = self.embed_dim
        tokens = batch * seq_len * E  # x_cache, Q_cache, ctx_cache
        kv_tokens = batch * S_kv * E  # K_cache, V_cache (and kv_cache for cross-attention)
        floats = 3 * tokens + (2 if kv_len is None else 3) * kv_tokens
        if not self.checkpoint:
            floats += batch * self.num_heads * seq_len * S_kv
        return 4 * floats

    # ---- forward -----------------------------------------------------------------------
    def forward(self, x, seq_len, mask=None, causal=False, kv=None, kv_len=None,
                training=False):
        """Attention over x (B*S, E): returns (B*S, E). See the class docstring."""
        E, H = self.embed_dim, self.num_heads
        if not isinstance(causal, bool):
            raise ValueError("causal must be True or False, got %r" % (causal,))
        rows, _ = require_2d("x", x, E)
        B = require_rows("x", rows, seq_len)
        S = seq_len
        source = x
        if kv is not None:
            kv_rows, _ = require_2d("kv", kv, E)
            if kv_len is None:
                kv_len = kv_rows // B if kv_rows % B == 0 else 0
            if require_rows("kv", kv_rows, kv_len) != B:
                raise ValueError("kv holds %d sequences of %d, x holds %d"
                                 % (kv_rows // kv_len, kv_len, B))
            source = kv
        else:
            kv_len = S
        S_kv = kv_len
        if mask is not None:
            mshape = getattr(mask, "shape", None)
            if mshape != (B, S_kv):
                raise ValueError("mask must have shape (%d, %d) (batch, keys), got %r"
                                 % (B, S_kv, mshape))
        causal_keep = _causal_keep(S, S_kv) if causal else None

        Q = _project(x, self.Wq, self.bq)
        K = _project(source, self.Wk, self.bk)
        V = _project(source, self.Wv, self.bv)
        ctx = np.zeros((B * S, E))
        A_cache = None if self.checkpoint else np.zeros((B * H * S, S_kv))
        dropping = training and self.dropout > 0.0
        self._dropout_state = self._dropout_rng.state if dropping else None
        rng = self._dropout_rng
        for block, keep, q0, q1, k0, k1, c0, c1 in self._blocks(B, S, S_kv, mask, causal_keep):
            A = self._weights(Q[q0:q1, c0:c1], K[k0:k1, c0:c1], keep)
            if A_cache is not None:
                A_cache[block * S:(block + 1) * S, :] = A
            if dropping:
                A = A * self._keep_block(rng, S, S_kv, self._kept)
            ctx[q0:q1, c0:c1] = np.dot(A, V[k0:k1, c0:c1])

        self.x_cache, self.kv_cache = x, kv
        self.Q_cache, self.K_cache, self.V_cache = Q, K, V
        self.A_cache, self.ctx_cache = A_cache, ctx
        self._layout = (B, S, S_kv, mask, causal_keep)
        return _project(ctx, self.Wo, self.bo)

    def _blocks(self, B, S, S_kv, mask, causal_keep):
        """For each (sequence b, head h): block b*H+h, allowed keys, query rows, key rows, columns."""
        H, D = self.num_heads, self.head_dim
        for b in range(B):
            keep = _allowed(mask, b, causal_keep, S, S_kv)
            for h in range(H):
                yield (b * H + h, keep, b * S, (b + 1) * S, b * S_kv, (b + 1) * S_kv,
                       h * D, (h + 1) * D)

    def _weights(self, q, k, keep):
        """softmax over keys of q k^T * scale, with disallowed keys set to -1e9."""
        scores = np.dot(q, k.transpose()) * self.scale
        if keep is not None:
            scores = scores * keep + (keep - 1.0) * -MASKED_SCORE
        rows = scores.shape[0]
        e = np.exp(scores - np.max(scores, axis=1).reshape((rows, 1)))
        return e / np.sum(e, axis=1).reshape((rows, 1))

    def _keep_block(self, rng, rows, cols, kept):
        """One block of the dropout mask: `kept` where a weight stays, 0 where it drops."""
        p = self.dropout
        return np.array([[kept if rng.random() >= p else 0.0 for _ in range(cols)]
                         for _ in range(rows)])

    def keep_mask(self):
        """The 0/1 dropout keep-mask of the last training forward, (B*H*S, S_kv), or None."""
        if self._dropout_state is None:
            return None
        B, S, S_kv = self._layout[:3]
        rng = Rng(0)
        rng.state = self._dropout_state
        mask = np.zeros((B * self.num_heads * S, S_kv))
        for block in range(B * self.num_heads):
            mask[block * S:(block + 1) * S, :] = self._keep_block(rng, S, S_kv, 1.0)
        return mask

    # ---- backward ----------------------------------------------------------------------
    def backward(self, grad_out):
        """Gradients of the last forward: accumulates dW*, db*; returns dx, or (dx, dkv)."""
        if self._layout is None:
            raise ValueError("backward() called before forward()")
        B, S, S_kv, mask, causal_keep = self._layout
        E = self.embed_dim
        shape = getattr(grad_out, "shape", None)
        if shape != (B * S, E):
            raise ValueError("grad_out must have shape (%d, %d) like the output, got %r"
                             % (B * S, E, shape))
        Q, K, V = self.Q_cache, self.K_cache, self.V_cache

        self.dWo += np.dot(grad_out.transpose(), self.ctx_cache)
        if self.dbo is not None:
            self.dbo += np.sum(grad_out, axis=0)
        dctx = np.dot(grad_out, self.Wo)

        dQ = np.zeros((B * S, E))
        dK = np.zeros((B * S_kv, E))
        dV = np.zeros((B * S_kv, E))
        rng = None
        if self._dropout_state is not None:
            rng = Rng(0)
            rng.state = self._dropout_state
        for block, keep, q0, q1, k0, k1, c0, c1 in self._blocks(B, S, S_kv, mask, causal_keep):
            q, k, v = Q[q0:q1, c0:c1], K[k0:k1, c0:c1], V[k0:k1, c0:c1]
            dc = dctx[q0:q1, c0:c1]
            if self.A_cache is not None:
                A = self.A_cache[block * S:(block + 1) * S, :]
            else:
                A = self._weights(q, k, keep)
            dA = np.dot(dc, v.transpose())
            if rng is not None:
                dropped = self._keep_block(rng, S, S_kv, self._kept)
                dV[k0:k1, c0:c1] = np.dot((A * dropped).transpose(), dc)
                dA = dA * dropped
            else:
                dV[k0:k1, c0:c1] = np.dot(A.transpose(), dc)
            dS = A * (dA - np.sum(dA * A, axis=1).reshape((S, 1))) * self.scale
            if keep is not None:
                dS = dS * keep
            dQ[q0:q1, c0:c1] = np.dot(dS, k)
            dK[k0:k1, c0:c1] = np.dot(dS.transpose(), q)

        source = self.x_cache if self.kv_cache is None else self.kv_cache
        dx = self._project_back(dQ, self.x_cache, self.Wq, self.dWq, self.dbq)
        dsource = self._project_back(dK, source, self.Wk, self.dWk, self.dbk)
        dsource += self._project_back(dV, source, self.Wv, self.dWv, self.dbv)
        if self.kv_cache is not None:
            return dx, dsource
        dx += dsource
        return dx

    @staticmethod
    def _project_back(dproj, inputs, W, dW, db):
        """For proj = inputs W^T + b: dW += dproj^T inputs, db += column sums; returns dinputs."""
        dW += np.dot(dproj.transpose(), inputs)
        if db is not None:
            db += np.sum(dproj, axis=0)
        return np.dot(dproj, W)


def _project(x, W, b):
    """x W^T + b."""
    y = np.dot(x, W.transpose())
    if b is not None:
        y += b
    return y


def _causal_keep(S, S_kv):
    """1 where key j <= query i, else 0: (S, S_kv)."""
    return np.array([[1.0 if j <= i else 0.0 for j in range(S_kv)] for i in range(S)])


def _allowed(mask, b, causal_keep, S, S_kv):
    """The (S, S_kv) 0/1 keys sequence b may attend to, or None when all are allowed."""
    if mask is None:
        return causal_keep
    keep = np.zeros((S, S_kv)) + mask[b:b + 1, :]
    if causal_keep is not None:
        keep = keep * causal_keep
    return keep


def padding_mask(lengths, seq_len):
    """A (B, seq_len) mask with 1 for the first lengths[b] tokens of sequence b, 0 after."""
    if not isinstance(seq_len, int) or seq_len < 1:
        raise ValueError("seq_len must be an int >= 1, got %r" % (seq_len,))
    if not isinstance(lengths, (list, tuple)):
        raise ValueError("lengths must be a list of ints, got %r" % (lengths,))
    rows = []
    for n in lengths:
        if not isinstance(n, int) or not 0 <= n <= seq_len:
            raise ValueError("each length must be an int in 0..%d, got %r" % (seq_len, n))
        rows.append([1.0] * n + [0.0] * (seq_len - n))
    return np.array(rows)
