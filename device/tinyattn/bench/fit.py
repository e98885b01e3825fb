"""One trial of the largest-S search (tinyattn.bench, and the host's fresh interpreter per
trial). Kept apart from tinyattn.bench so that a trial loads only what it measures."""

import gc

from ..nn.attention import Attention
from ..rng import Rng


def fits(S, embed_dim=64, num_heads=4, checkpoint=False):
    """Whether forward plus backward of Attention(embed_dim, num_heads) on one sequence of S
    tokens completes in the free heap; the layer, its gradients and the input (a ulab array)
    are made here too, and dropped before returning."""
    layer = x = None
    gc.collect()
    try:
        layer = Attention(embed_dim, num_heads, checkpoint=checkpoint, seed=1)
        x = Rng(S).uniform_matrix(S, embed_dim, -1.0, 1.0)
        layer.backward(layer.forward(x, S, training=True))
        return True
    except MemoryError:
        return False
    finally:
        layer = x = None
        gc.collect()
