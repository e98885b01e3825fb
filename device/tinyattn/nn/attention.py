"""Multi-head attention on ulab arrays, forward and backward (the spec's Attention layer).

Shapes: B sequences of S tokens are stored as (B*S, E), one token a row; head h is the
column range h*D:(h+1)*D with D = E/H. The attention weights of block (b, h) are rows
(b*H + h)*S ... of A_cache, the spec's [B*H, S, S] in two dimensions.
"""

import math

from ulab import numpy as np

from .layer import Layer
from ..rng import Rng, keep_threshold
from . import masks
from .checks import require_2d, require_rows

BLOCK_BYTES = 2048  # the largest temporary a gradient product makes (a block of rows)


class Attention(Layer):
    """Multi-head attention: y = concat_h(softmax(Q_h K_h^T / sqrt(D)) V_h) Wo^T + bo.

    Q = x Wq^T + bq, K = key Wk^T + bk, V = value Wv^T + bv: key = value = x for
    self-attention, = kv for `kv=`, or separate (`key=`, `value=`, PyTorch's query, key, value).
    Weights are Xavier-uniform from `seed`, biases zero. `dropout` drops attention weights
    (inverted dropout) when `forward(..., training=True)`; `checkpoint=True` keeps no
    attention weights between forward and backward and recomputes them. An inference
    forward (training=False) keeps nothing, unless `keep_weights` is set: then it keeps the
    attention weights (A_cache, attention_map) only.
    """

    PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")
    keep_weights = False

    def __init__(self, embed_dim, num_heads, use_bias=True, dropout=0.0, checkpoint=False,
                 seed=None):
        # the checks of SelfAttention's declaration (spec.py), which builds on this class
        from .arguments import flag, fraction, heads_divide

        heads_divide(embed_dim, num_heads)
        fraction("dropout", dropout)
        flag("use_bias", use_bias)
        flag("checkpoint", checkpoint)
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.use_bias = use_bias
        self.dropout = dropout
        self.checkpoint = checkpoint
        self._kept = 1.0 / (1.0 - dropout)  # inverted dropout scales what it keeps
        self._threshold = keep_threshold(dropout) if dropout else None
        self._keep_buf = self._keep_view = None  # the dropout mask of one block, reused
        rng = Rng(seed)
        self._dropout_rng = Rng(rng.next32())
        bound = math.sqrt(6.0 / (embed_dim + embed_dim))
        E = embed_dim
        self.Wq, self.Wk, self.Wv, self.Wo = [
            rng.uniform_matrix(E, E, -bound, bound) for _ in range(4)]
        self.bq, self.bk, self.bv, self.bo = [
            np.zeros(E) if use_bias else None for _ in range(4)]
        self.dWq = self.dWk = self.dWv = self.dWo = None  # made on first need (layer.py)
        self.dbq = self.dbk = self.dbv = self.dbo = None
        self.clear_caches()

    def clear_caches(self):
        """Drop what the last forward kept for backward."""
        self.x_cache = self.kv_cache = self.value_cache = None
        self.Q_cache = self.K_cache = self.V_cache = None
        self.A_cache = self.ctx_cache = None
        self._layout = None
        self._dropout_state = None

    # ---- parameters --------------------------------------------------------------------
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
                training=False, key=None, value=None):
        """Attention over x (B*S, E): returns (B*S, E). See the class docstring. key and
        value (B*S_kv, E) each (value defaults to key); kv= is key = value = kv."""
        self.grads_first(training)
        key_in, value_in = key, value
        E, H = self.embed_dim, self.num_heads
        if not isinstance(causal, bool):
            raise ValueError("causal must be True or False, got %r" % (causal,))
        rows, _ = require_2d("x", x, E)
        B = require_rows("x", rows, seq_len)
        S = seq_len
        key = value = x
        roles = (0, 0)
        if kv is not None or key_in is not None or value_in is not None:
            from .key_value import key_value  # (its heap only for such calls)

            key, value, roles, kv_len = key_value(x, B, E, kv, kv_len, key_in, value_in)
        else:
            kv_len = S
        S_kv = kv_len
        if mask is not None:
            mshape = getattr(mask, "shape", None)
            if mshape != (B, S_kv):
                raise ValueError("mask must have shape (%d, %d) (batch, keys), got %r"
                                 % (B, S_kv, mshape))
        causal_keep = masks.causal_keep(S, S_kv) if causal else None

        Q = _project(x, self.Wq, self.bq)
        K = _project(key, self.Wk, self.bk)
        V = _project(value, self.Wv, self.bv)
        ctx = np.zeros((B * S, E))
        A_cache = np.zeros((B * H * S, S_kv)) \
            if (not self.checkpoint if training else self.keep_weights) else None
        dropping = training and self.dropout > 0.0
        rng = self._dropout_rng
        self._dropout_state = rng.state() if dropping else None
        for block, allowed, q0, q1, k0, k1, c0, c1 in self._blocks(B, S, S_kv, mask, causal_keep):
            A = self._weights(Q[q0:q1, c0:c1], K[k0:k1, c0:c1], allowed)
            if A_cache is not None:
                cached = A_cache[block * S:(block + 1) * S, :]
                cached += A  # the cache is zero there: A itself
            if dropping:
                A *= self._keep_block(rng, S, S_kv)
                A *= self._kept
            part = ctx[q0:q1, c0:c1]
            part += np.dot(A, V[k0:k1, c0:c1])  # ctx is zero there: the product itself
            A = None  # before the next block's weights are made

        if training:
            self.x_cache, self.kv_cache, self.value_cache = x, key, value
            self.Q_cache, self.K_cache, self.V_cache = Q, K, V
            self.ctx_cache = ctx
            self._layout = (B, S, S_kv, mask, causal_keep, roles)
        else:
            self.clear_caches()
        self.A_cache = A_cache
        Q = K = V = None
        return _project(ctx, self.Wo, self.bo)

    def _blocks(self, B, S, S_kv, mask, causal_keep):
        """For each (sequence b, head h): block b*H+h, allowed keys (masks.allowed), query rows,
        key rows, columns."""
        H, D = self.num_heads, self.head_dim
        for b in range(B):
            allowed = masks.allowed(mask, b, causal_keep, S, S_kv)
            for h in range(H):
                yield (b * H + h, allowed, b * S, (b + 1) * S, b * S_kv, (b + 1) * S_kv,
                       h * D, (h + 1) * D)

    def _weights(self, q, k, allowed):
        """softmax over keys of q k^T * scale, with disallowed keys set to -1e9."""
        scores = np.dot(q, k.transpose())
        scores *= self.scale
        if allowed is not None:
            keep, penalty = allowed
            scores *= keep
            scores += penalty
        rows = scores.shape[0]
        scores -= np.max(scores, axis=1).reshape((rows, 1))
        e = np.exp(scores)
        e /= np.sum(e, axis=1).reshape((rows, 1))
        return e

    def _keep_block(self, rng, rows, cols):
        """One block of the dropout mask, 1 where a weight stays, 0 where it drops: a uint8
        view of a byte buffer that every block (and call) of this shape reuses."""
        if self._keep_view is None or self._keep_view.shape != (rows, cols):
            self._keep_view = self._keep_buf = None
            self._keep_buf = bytearray(rows * cols)
            self._keep_view = np.frombuffer(self._keep_buf, dtype=np.uint8).reshape((rows, cols))
        rng.fill_keep(self._keep_buf, self._threshold)
        return self._keep_view

    def keep_mask(self):
        """The 0/1 dropout keep-mask of the last training forward, (B*H*S, S_kv), or None."""
        if self._dropout_state is None:
            return None
        B, S, S_kv = self._layout[:3]
        rng = Rng(0)
        rng.set_state(self._dropout_state)
        mask = np.zeros((B * self.num_heads * S, S_kv))
        for block in range(B * self.num_heads):
            part = mask[block * S:(block + 1) * S, :]
            part += self._keep_block(rng, S, S_kv)
        return mask

    def calibration_stats(self, x, kv=None):
        """max |Q|, |K|, |V| of x (and kv) as forward computes them (what int8 quantization
        scales from), one projection at a time."""
        source = x if kv is None else kv
        stats = {}
        for name, inputs, W, b in (("q", x, self.Wq, self.bq), ("k", source, self.Wk, self.bk),
                                   ("v", source, self.Wv, self.bv)):
            a = _project(inputs, W, b)
            stats[name] = float(np.max(np.maximum(a, -a)))
            a = None
        return stats

    # ---- backward ----------------------------------------------------------------------
    def backward(self, grad_out):
        """Gradients of the last forward: accumulates dW*, db*; returns the gradient of each
        distinct input: dx (self-attention), (dx, dkv) (kv=, or key is value), (dx, dkey,
        dvalue) (separate key and value), (dx, dvalue) (key is x).

        Backward consumes the caches: it writes dctx over ctx, dQ, dK, dV over Q, K, V and
        the inputs' gradients over them, a block at a time, and the layer lets them go.
        """
        if self.Q_cache is None:
            raise ValueError("backward() called before forward(x, training=True)")
        B, S, S_kv, mask, causal_keep, roles = self._layout
        E = self.embed_dim
        shape = getattr(grad_out, "shape", None)
        if shape != (B * S, E):
            raise ValueError("grad_out must have shape (%d, %d) like the output, got %r"
                             % (B * S, E, shape))
        x, key, value = self.x_cache, self.kv_cache, self.value_cache
        A_cache, ctx = self.A_cache, self.ctx_cache
        Q, K, V = self.Q_cache, self.K_cache, self.V_cache
        self.collect_params()  # the gradient buffers, made the first time
        self.x_cache = self.kv_cache = self.value_cache = None
        self.Q_cache = self.K_cache = self.V_cache = None
        self.A_cache = self.ctx_cache = None

        add_product(self.dWo, grad_out, ctx)
        if self.dbo is not None:
            self.dbo += np.sum(grad_out, axis=0)
        dctx = ctx
        for r0, r1 in _row_blocks(B * S, E):
            dctx[r0:r1, :] = np.dot(grad_out[r0:r1, :], self.Wo)
        rng = None
        if self._dropout_state is not None:
            rng = Rng(0)
            rng.set_state(self._dropout_state)
        for block, allowed, q0, q1, k0, k1, c0, c1 in self._blocks(B, S, S_kv, mask, causal_keep):
            q, k, v = Q[q0:q1, c0:c1], K[k0:k1, c0:c1], V[k0:k1, c0:c1]
            dc = dctx[q0:q1, c0:c1]
            if A_cache is not None:
                A = A_cache[block * S:(block + 1) * S, :]
            else:
                A = self._weights(q, k, allowed)
            dA = np.dot(dc, v.transpose())
            if rng is not None:
                keep = self._keep_block(rng, S, S_kv)
                dropped = A * keep
                dropped *= self._kept
                V[k0:k1, c0:c1] = np.dot(dropped.transpose(), dc)
                dropped = None
                dA *= keep
                dA *= self._kept
            else:
                V[k0:k1, c0:c1] = np.dot(A.transpose(), dc)
            # dS = A * (dA - rowsum(dA * A)) * scale, zero at disallowed keys
            dA -= _row_dots(dA, A)
            dA *= A
            dA *= self.scale
            if allowed is not None:
                dA *= allowed[0]
            dk = np.dot(dA.transpose(), q)
            Q[q0:q1, c0:c1] = np.dot(dA, k)
            K[k0:k1, c0:c1] = dk
            A = dA = dk = None  # before the next block's are made
        A_cache = dctx = ctx = None

        add_product(self.dWq, Q, x)
        add_product(self.dWk, K, key)
        add_product(self.dWv, V, value)
        for db, dproj in ((self.dbq, Q), (self.dbk, K), (self.dbv, V)):
            if db is not None:
                db += np.sum(dproj, axis=0)
        # each input's gradient: dQ Wq, dK Wk, dV Wv, a block of rows at a time, over dQ, dK,
        # dV; then summed where one input is the source of more than one (roles)
        for grad, W, rows in ((Q, self.Wq, B * S), (K, self.Wk, B * S_kv), (V, self.Wv, B * S_kv)):
            for r0, r1 in _row_blocks(rows, E):
                grad[r0:r1, :] = np.dot(grad[r0:r1, :], W)
        grads = [Q]
        for grad, role in ((K, roles[0]), (V, roles[1])):
            if role < len(grads):
                grads[role] += grad
            else:
                grads.append(grad)
        return grads[0] if len(grads) == 1 else tuple(grads)


def _project(x, W, b):
    """x W^T + b."""
    y = np.dot(x, W.transpose())
    if b is not None:
        y += b
    return y


def _row_blocks(rows, cols):
    """(r0, r1) ranges over `rows` rows of `cols` floats, each block BLOCK_BYTES at most."""
    step = max(1, BLOCK_BYTES // (4 * cols))
    for r0 in range(0, rows, step):
        yield r0, min(r0 + step, rows)


def _row_dots(a, b):
    """The (rows, 1) column of np.sum(a * b, axis=1), a block of rows at a time (no
    temporary as large as a)."""
    rows, cols = a.shape
    out = np.zeros((rows, 1))
    for r0, r1 in _row_blocks(rows, cols):
        part = out[r0:r1, :]
        part += np.sum(a[r0:r1, :] * b[r0:r1, :], axis=1).reshape((r1 - r0, 1))
    return out


def add_product(dW, g, inputs):
    """dW += g^T inputs (a weight's gradient), a block of dW's rows at a time, so that no
    temporary as large as dW is made."""
    for r0, r1 in _row_blocks(dW.shape[0], dW.shape[1]):
        part = dW[r0:r1, :]
        part += np.dot(g[:, r0:r1].transpose(), inputs)
