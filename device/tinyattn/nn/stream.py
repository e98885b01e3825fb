"""Streaming causal inference: a model run one token (frame) at a time, with a key/value
cache per encoder layer holding the last W tokens (a ring buffer).

Stream(model, window) takes a Sequential whose encoder layers are causal; step(x_t) takes
one frame (1, F) and returns the model's output for it. Per token the cost is the
projections of one row and attention over at most W cached keys: O(W E + E^2) a layer, where
a full forward over the window is O(W^2 E + W E^2).

What each kind of layer does on a stream is its declaration's STREAM role (nn/spec.py):
- "skip" (Tokens): nothing (a frame is one token).
- "row" (Dense, Activation, Gelu, LayerNorm): on the one row, as in a full forward.
- "position" (PositionalEmbedding): token t (counted from reset()) gets row t of the table, the position
  it arrives at, and keeps it: its cached keys and values are not recomputed when the window
  slides. The table has S rows, so a stream takes at most S tokens before reset()
  (ValueError after).
- "cache" (TransformerEncoderLayer, causal=True): its query attends to the cached keys of the last W
  tokens (this one included); the oldest leaves when the window is full.
- "pool" (GlobalAvgPool): the mean of its input over the last W tokens.
While t < W (the window holds every token so far) the output equals the full causal forward
of those t + 1 tokens. Once the window slides, each cached key and value is the one computed
when its token arrived (with the context it had then); for a model with one encoder layer and
no pooling, the newest token's output is still the full causal forward of the window's tokens
(each with its arrival position); with more layers, or pooling, it is the cache's answer.
"""

from ulab import numpy as np

from .attention import _project
from .checks import require_2d
from .sdpa import Call, forward
from .spec import STREAM, role


class Stream:
    """One token at a time through `model` (a Sequential) with a window of W tokens."""

    def __init__(self, model, window):
        from .sequential import Sequential

        if not isinstance(model, Sequential):
            raise ValueError("model must be a Sequential, got %s" % type(model).__name__)
        if not isinstance(window, int) or window < 1:
            raise ValueError("window must be an int >= 1, got %r" % (window,))
        self.window = window
        self.width = frame_width(model)
        self.steps = []  # (role, layer, state) in model order
        self.limit = None
        for layer in model.layers:
            does = role(type(layer).__name__, STREAM)
            state = None
            if does == "cache":
                if not layer.causal:
                    raise ValueError("a stream needs causal encoder layers: make them with "
                                     "causal=True")
                state = _KVCache(layer.self_attn, window)
            elif does == "pool":
                state = np.zeros((window, _width_before(model, layer)))
            elif does == "position":
                self.limit = layer.seq_len
            elif does is None:
                raise ValueError("a stream cannot run a %s layer" % type(layer).__name__)
            self.steps.append((does, layer, state))
        self.reset()

    def reset(self):
        """Forget every token: the next step is token 0 again."""
        self.t = 0
        for does, _, state in self.steps:
            if does == "cache":
                state.clear()
            elif does == "pool":
                state[:] = 0.0

    def cache_bytes(self):
        """Bytes of the float state (float32 on a board): keys and values of each encoder
        layer, the pool's rows."""
        total = 0
        for does, _, state in self.steps:
            if does == "cache":
                total += state.K.itemsize * (state.K.size + state.V.size)
            elif does == "pool":
                total += state.itemsize * state.size
        return total

    def step(self, x_t):
        """The model's output (1, out) for the next token x_t (1, F)."""
        check_frame(x_t, self.width)
        t = self.t
        if self.limit is not None and t >= self.limit:
            raise ValueError("the positional table has %d rows: the stream took them all, "
                             "reset() to start again" % self.limit)
        kept = min(t + 1, self.window)
        slot = t % self.window
        x = x_t
        for does, layer, state in self.steps:
            if does == "skip":
                continue
            if does == "position":
                x = x + layer.P[t:t + 1, :]
            elif does == "cache":
                x = _encoder_step(layer, state, x, slot, kept)
            elif does == "pool":
                state[slot:slot + 1, :] = x
                x = np.sum(state[:kept, :], axis=0).reshape((1, x.shape[1])) * (1.0 / kept)
            else:
                x = layer.forward(x)
        self.t = t + 1
        return x


class _KVCache:
    """The keys and values (W, E_kv) of one attention layer's last W tokens, row t mod W:
    its H_kv key/value heads only (E_kv = H_kv * D; a quarter of E for H_kv = H/4)."""

    def __init__(self, attention, window):
        E_kv = attention.kv_dim
        self.attention = attention
        self.K, self.V = np.zeros((window, E_kv)), np.zeros((window, E_kv))

    def clear(self):
        self.K[:] = 0.0
        self.V[:] = 0.0

    def attend(self, z, slot, kept):
        """Attention output (1, E) of query row z, its key and value stored at `slot` first."""
        a = self.attention
        K, V = self.K, self.V
        K[slot:slot + 1, :] = _project(z, a.Wk, a.bk)
        V[slot:slot + 1, :] = _project(z, a.Wv, a.bv)
        q = _project(z, a.Wq, a.bq)
        # scaled_dot_product_attention of one query over the cached keys, all in the past: no
        # causal mask (their order is the ring's)
        D = a.head_dim
        ctx = np.zeros((1, a.embed_dim))
        forward(Call(1, 1, kept, a.num_heads, a.num_kv_heads, D, D, scale=a.scale), q,
                K[:kept, :], V[:kept, :], ctx)
        return _project(ctx, a.Wo, a.bo)


def _encoder_step(layer, cache, x, slot, kept):
    """One token through a causal TransformerEncoderLayer (inference: no dropout)."""
    def ff(z):
        return layer.linear2.forward(layer.activation.forward(layer.linear1.forward(z)))

    if layer.norm_first:
        h = x + cache.attend(layer.norm1.forward(x), slot, kept)
        return h + ff(layer.norm2.forward(h))
    h = layer.norm1.forward(x + cache.attend(x, slot, kept))
    return layer.norm2.forward(h + ff(h))


def frame_width(model):
    """The features of one token of a stream of `model` (a Sequential): the first width a
    layer fixes (nn/flow.py), less the Tokens before it; None when no layer fixes one."""
    from .flow import follow
    from .spec import FLOW, KINDS

    width, split = follow(model.config())[0], 1
    for layer in model.layers:
        kind = KINDS[type(layer).__name__]
        if kind[STREAM] == "skip":  # Tokens: a frame is its rows side by side
            split *= layer.seq_len
        elif any(step == "features" for step, _ in kind[FLOW]):
            break
    return None if width is None else width // split


def check_frame(x_t, width):
    """ValueError unless x_t is one token (1, F) of `width` features (None: any)."""
    require_2d("x_t", x_t)
    if x_t.shape[0] != 1:
        raise ValueError("step takes one token, a (1, F) array, got %r" % (x_t.shape,))
    if width is not None and x_t.shape[1] != width:
        raise ValueError("a token of this stream has %d features, got %r"
                         % (width, x_t.shape))


def _width_before(model, pool):
    """The width of the rows a GlobalAvgPool gets: the model's shapes followed up to it
    (flow.py, each kind's declaration)."""
    from .flow import follow

    index = [i for i, layer in enumerate(model.layers) if layer is pool][0]
    width = follow(model.config()[:index])[2][1] if index else None
    if width is None:
        raise ValueError("a stream's pooling needs a layer before it that sets the width")
    return width
