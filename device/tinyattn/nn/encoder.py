"""PyTorch's nn.TransformerEncoderLayer on ulab arrays, with backward.

Self-attention and a feed-forward block (Dense, activation, Dense), each with its residual
connection and a LayerNorm after it (norm_first=False, PyTorch's default) or before it:

    norm_first=False:  h = norm1(x + self_attn(x));  y = norm2(h + ff(h))
    norm_first=True:   h = x + self_attn(norm1(x));  y = h + ff(norm2(h))

with ff(z) = linear2(activation(linear1(z))).
"""

from .attention import Attention
from .gelu import Gelu
from .layer import Layer
from .norm import LayerNorm
from .layers import Activation, Dense
from ..rng import Rng



class TransformerEncoderLayer(Layer):
    """TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
    activation="relu", norm_first=False, layer_norm_eps=1e-5, seq_len=None, causal=False,
    num_kv_heads=None, seed=None): PyTorch's arguments, plus the layout tinyattn needs and
    grouped-query heads (num_kv_heads, Attention's; PyTorch's layer has none).

    dropout p, as PyTorch's layer drops out in training (forward(..., training=True)): on
    the attention weights (self_attn's), after the attention block (dropout1), inside the
    feed-forward after the activation (dropout) and after linear2 (dropout2); each from its
    own Rng seeded from `seed`, so a run is reproducible; off in inference. Each part's
    keep_mask() gives the last training forward's mask.

    activation "relu", or "gelu" in its erf form (gelu.py) as PyTorch computes it.
    `seq_len`: tokens per sequence of the (B*S, E) batches (needed inside a Sequential; a
    forward call may pass another). `causal=True`: token i attends to keys 0..i. Weights
    from `seed`: Attention's and Dense's Xavier-uniform, LayerNorm gamma 1, beta 0.
    Parameters are named "self_attn.Wq" ... "linear1.W", "linear1.b", "linear2.W",
    "linear2.b", "norm1.gamma", "norm1.beta", "norm2.gamma", "norm2.beta".
    """

    def __init__(self, *args, seed=None, **named):
        (d_model, nhead, dim_feedforward, dropout, activation, norm_first, layer_norm_eps,
         seq_len, causal, num_kv_heads) = self.arguments(args, named)
        rng = Rng(seed)
        self.self_attn = Attention(d_model, nhead, dropout=dropout, seed=rng.next32(),
                                   num_kv_heads=num_kv_heads)
        self.linear1 = Dense(d_model, dim_feedforward, seed=rng.next32())
        self.activation = Gelu() if activation == "gelu" else Activation("relu")
        self.linear2 = Dense(dim_feedforward, d_model, seed=rng.next32())
        # drawn after the weights' seeds: dropout 0 keeps the weights of a layer without it;
        # without dropout no Dropout (nor its module's heap)
        self.dropout1 = self.dropout = self.dropout2 = None
        if dropout:
            from .dropout import Dropout

            self.dropout1, self.dropout, self.dropout2 = [
                Dropout(dropout, seed=rng.next32()) for _ in range(3)]
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.d_model, self.nhead, self.dim_feedforward = d_model, nhead, dim_feedforward
        self.activation_name, self.norm_first = activation, norm_first
        self.layer_norm_eps, self.seq_len, self.causal = layer_norm_eps, seq_len, causal
        self._parts = (("self_attn", self.self_attn), ("linear1", self.linear1),
                       ("linear2", self.linear2), ("norm1", self.norm1), ("norm2", self.norm2))

    def forward(self, x, training=False, mask=None, seq_len=None, causal=None):
        """x (B*S, E) to (B*S, E). `mask` (B, S): 1 keeps a key, 0 marks padding (PyTorch's
        key_padding_mask is the opposite: True ignores). seq_len, causal: None = the layer's."""
        S = self.seq_len if seq_len is None else seq_len
        if S is None:
            raise ValueError("no seq_len: give TransformerEncoderLayer(..., seq_len=S) or "
                             "forward(x, seq_len=S)")
        causal = self.causal if causal is None else causal

        def sa(z):
            a = self.self_attn.forward(z, S, mask=mask, causal=causal, training=training)
            return _drop(self.dropout1, a, training)

        if self.norm_first:
            h = x + sa(self.norm1.forward(x, training))
            return h + self._ff(self.norm2.forward(h, training), training)
        h = self.norm1.forward(x + sa(x), training)
        return self.norm2.forward(h + self._ff(h, training), training)

    def _ff(self, z, training):
        z = self.activation.forward(self.linear1.forward(z, training), training)
        f = _drop(self.dropout, z, training)
        return _drop(self.dropout2, self.linear2.forward(f, training), training)

    def _ff_back(self, g):
        g = _undrop(self.dropout, self.linear2.backward(_undrop(self.dropout2, g)))
        return self.linear1.backward(self.activation.backward(g))

    def _sa_back(self, g):
        return self.self_attn.backward(_undrop(self.dropout1, g))

    def backward(self, grad_out):
        """Gradients of the last forward (accumulated in every part); returns dx. Then the
        caches are dropped, so that the next forward does not find the last one's in the heap."""
        if self.norm_first:
            dh = grad_out + self.norm2.backward(self._ff_back(grad_out))
            dx = dh + self.norm1.backward(self._sa_back(dh))
        else:
            d = self.norm2.backward(grad_out)
            dh = self.norm1.backward(d + self._ff_back(d))
            dx = dh + self._sa_back(dh)
        self.clear_caches()
        return dx

    def calibrate(self, x, mask=None):
        """(y, {name: max |.|}) of x through its parts: each intermediate its int8 form
        quantizes (int8/encoder_convert.py's encoder_stats; int8.quantize's calibration asks)."""
        from ..int8.encoder_convert import encoder_stats

        return encoder_stats(self, x, mask)

    def clear_caches(self):
        """Drop what every part kept for backward."""
        for _, layer in self._parts:
            layer.clear_caches()
        self.activation.clear_caches()

    def collect_params(self, grads=True):
        """(name, param, grad) of every part, named "<part>.<name>", e.g. "linear1.W"
        (grads: see layer.Layer.collect_params)."""
        groups = []
        for part, layer in self._parts:
            for name, param, grad in layer.collect_params(grads):
                groups.append((part + "." + name, param, grad))
        return groups


def _drop(dropout, x, training):
    return x if dropout is None else dropout.forward(x, training)


def _undrop(dropout, g):
    return g if dropout is None else dropout.backward(g)
