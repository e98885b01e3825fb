"""Multi-head attention on ulab arrays, forward and backward (the spec's Attention layer): the
projections around scaled_dot_product_attention (nn/sdpa.py), the core they share.

Shapes: B sequences of S tokens are stored as (B*S, E), one token a row; query head h is the
column range h*D:(h+1)*D with D = E/H, key/value head g of K and V (B*S_kv, H_kv*D) the range
g*D:(g+1)*D, read by query heads g*H/H_kv ... The attention weights of block (b, h) are rows
(b*H + h)*S ... of A_cache, the spec's [B*H, S, S] in two dimensions.
"""

import math

from ulab import numpy as np

from .layer import Layer, row_blocks
from ..rng import Rng, keep_threshold
from .checks import require_2d, require_rows

class Attention(Layer):
    """Multi-head attention: y = concat_h(softmax(Q_h K_g(h)^T / sqrt(D)) V_g(h)) Wo^T + bo.

    Q = x Wq^T + bq, K = key Wk^T + bk, V = value Wv^T + bv: key = value = x for
    self-attention, = kv for `kv=`, or separate (`key=`, `value=`, PyTorch's query, key, value).
    `num_kv_heads` H_kv (a divisor of H, default H): grouped-query attention, K and V have
    H_kv heads (Wk, Wv are (H_kv*D, E)), query head h reads g(h) = h // (H / H_kv).
    Weights are Xavier-uniform from `seed`, biases zero. `dropout` drops attention weights
    (inverted dropout) when `forward(..., training=True)`; `checkpoint=True` keeps no
    attention weights between forward and backward and recomputes them. An inference
    forward (training=False) keeps nothing, unless `keep_weights` is set: then it keeps the
    attention weights (A_cache, attention_map) only.
    """

    PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")
    keep_weights = False

    def __init__(self, embed_dim, num_heads, use_bias=True, dropout=0.0, checkpoint=False,
                 seed=None, num_kv_heads=None):
        # the checks of SelfAttention's declaration (spec.py), which builds on this class
        from .arguments import flag, fraction, heads_divide, kv_heads_divide

        heads_divide(embed_dim, num_heads)
        num_kv_heads = kv_heads_divide(num_heads, num_kv_heads)
        fraction("dropout", dropout)
        flag("use_bias", use_bias)
        flag("checkpoint", checkpoint)
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.num_kv_heads = num_kv_heads
        self.kv_dim = E_kv = num_kv_heads * self.head_dim  # the width of K and V
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.use_bias = use_bias
        self.dropout = dropout
        self.checkpoint = checkpoint
        self._kept = 1.0 / (1.0 - dropout)  # inverted dropout scales what it keeps
        self._threshold = keep_threshold(dropout) if dropout else None
        self._keep_buf = self._keep_view = None  # the dropout mask of one block, reused
        rng = Rng(seed)
        self._dropout_rng = Rng(rng.next32())
        E = embed_dim
        self.Wq, self.Wk, self.Wv, self.Wo = [
            rng.uniform_matrix(rows, E, -_xavier(rows, E), _xavier(rows, E))
            for rows in (E, E_kv, E_kv, E)]
        self.bq, self.bk, self.bv, self.bo = [
            np.zeros(n) if use_bias else None for n in (E, E_kv, E_kv, E)]
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
        """2E^2 + 2 E E_kv weights and 2E + 2E_kv biases (E_kv = H_kv * D: E without GQA)."""
        E, E_kv = self.embed_dim, self.kv_dim
        return 2 * E * (E + E_kv) + (2 * (E + E_kv) if self.use_bias else 0)

    def cache_bytes(self, batch, seq_len, kv_len=None):
        """Bytes the training caches hold for this shape (float32), A_cache = B*H*S*S_kv."""
        S_kv = seq_len if kv_len is None else kv_len
        E = self.embed_dim
        tokens = batch * seq_len * E  # x_cache, Q_cache, ctx_cache
        kv_rows = batch * S_kv
        floats = 3 * tokens + 2 * kv_rows * self.kv_dim  # K_cache, V_cache
        if kv_len is not None:
            floats += kv_rows * E  # kv_cache for cross-attention
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

        Q = _project(x, self.Wq, self.bq)
        K = _project(key, self.Wk, self.bk)
        V = _project(value, self.Wv, self.bv)
        from . import sdpa  # the core: imported by the first forward, not by `import tinyattn`

        D = self.head_dim
        call = sdpa.Call(B, S, S_kv, H, self.num_kv_heads, D, D, mask=mask, causal=causal,
                         scale=self.scale, empty_rows_uniform=True)
        ctx = np.zeros((B * S, E))
        A_cache = np.zeros((B * H * S, S_kv)) \
            if (not self.checkpoint if training else self.keep_weights) else None
        dropping = training and self.dropout > 0.0
        rng = self._dropout_rng
        self._dropout_state = rng.state() if dropping else None
        sdpa.forward(call, Q, K, V, ctx, A_cache,
                     self._dropout(rng, S, S_kv) if dropping else None)

        if training:
            self.x_cache, self.kv_cache, self.value_cache = x, key, value
            self.Q_cache, self.K_cache, self.V_cache = Q, K, V
            self.ctx_cache = ctx
            self._layout = (B, S, S_kv, call, roles)
        else:
            self.clear_caches()
        self.A_cache = A_cache
        Q = K = V = None
        return _project(ctx, self.Wo, self.bo)

    def _dropout(self, rng, rows, cols):
        """sdpa's dropout: (the next block's keep mask from rng, the factor of what it keeps)."""
        return (lambda: self._keep_block(rng, rows, cols)), self._kept

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
        B, S, S_kv, call, roles = self._layout
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
        for r0, r1 in row_blocks(B * S, E):
            dctx[r0:r1, :] = np.dot(grad_out[r0:r1, :], self.Wo)
        dropout = None
        if self._dropout_state is not None:
            rng = Rng(0)
            rng.set_state(self._dropout_state)
            dropout = self._dropout(rng, S, S_kv)
        # dQ, dK, dV over Q, K, V (each block written after its last read)
        from .sdpa_backward import backward  # (its heap only for training)

        backward(call, dctx, Q, K, V, Q, K, V, None, A_cache, dropout)
        A_cache = dctx = ctx = call = None

        add_product(self.dWq, Q, x)
        add_product(self.dWk, K, key)
        add_product(self.dWv, V, value)
        for db, dproj in ((self.dbq, Q), (self.dbk, K), (self.dbv, V)):
            if db is not None:
                db += np.sum(dproj, axis=0)
        # each input's gradient: dQ Wq, dK Wk, dV Wv, a block of rows at a time, over dQ, dK,
        # dV (new arrays for dK, dV narrower than E: GQA); then summed where one input is the
        # source of more than one (roles)
        Q, K, V = [_times(grad, W) for grad, W in ((Q, self.Wq), (K, self.Wk), (V, self.Wv))]
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


def _times(grad, W):
    """grad W (the gradient of a projection's input), a block of rows at a time: over grad
    when W is square, else into a new array."""
    rows, cols = grad.shape[0], W.shape[1]
    out = grad if W.shape[0] == cols else np.zeros((rows, cols))
    for r0, r1 in row_blocks(rows, max(cols, grad.shape[1])):
        out[r0:r1, :] = np.dot(grad[r0:r1, :], W)
    return out


def _xavier(fan_out, fan_in):
    """Xavier-uniform's bound."""
    return math.sqrt(6.0 / (fan_in + fan_out))


def add_product(dW, g, inputs):
    """dW += g^T inputs (a weight's gradient), a block of dW's rows at a time, so that no
    temporary as large as dW is made."""
    for r0, r1 in row_blocks(dW.shape[0], dW.shape[1]):
        part = dW[r0:r1, :]
        part += np.dot(g[:, r0:r1].transpose(), inputs)
