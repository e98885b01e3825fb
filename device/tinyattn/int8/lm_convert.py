"""How the int8 language model's Embedding and Classifier (lm.py) are made from their float
layers (layers_convert.py says what a conversion is)."""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import backend  # noqa: F401
from .lm import QClassifier, QEmbedding
from .scales import int8_weights


class Embedding:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        W, s_w = int8_weights(layer.W)
        return QEmbedding(layer.num_embeddings, layer.embedding_dim, W, s_w)


class Classifier:
    @staticmethod
    def quantize(layer, stats, s_x, s_y, seq_len=None):
        if layer.tied:
            return QClassifier(layer.dim, layer.vocab_size, True, None, s_x, None)
        W, s_w = int8_weights(layer.W)
        return QClassifier(layer.dim, layer.vocab_size, False, W, s_x, s_w)
