"""Train the shipped story model once, with PyTorch (not a dependency of the suite):

    python3 data/stories/make_stories.py
    PYTHONPATH=host /work/torchenv/bin/python data/stories/train_stories.py

(from the repository's root). Writes beside this file:

- tokenizer.bin: llama2.c's format, a byte-pair vocabulary of 320 pieces learned from
  stories.txt (<unk>, <s>, </s>, the 256 byte tokens, each character of the text, then merges
  in the order learned: a merge's score is minus its rank, so run.c's encode, which merges the
  best-scoring pair first, replays them);
- model.bin: llama2.c's legacy checkpoint of a Llama decoder (dim 32, 2 layers, 4 query and 2
  key/value heads, hidden 88, context 128, classifier tied to the embedding), trained on the
  stories (each one <s> and its tokens) with Adam; import-llama2c reads it.

Prints the training loss and a greedy sample. Seeded; torch's CPU kernels make the weights the
same run to run on one machine, not bit for bit across machines.
"""

import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tinyattn_host.device_modules import device_module
from tinyattn_host.interop.llama2c import write_checkpoint

HERE = Path(__file__).resolve().parent
TOKENIZER = device_module("lm/tokenizer")
VOCAB, DIM, LAYERS, HEADS, KV_HEADS, HIDDEN, SEQ = 320, 32, 2, 4, 2, 88, 128
STEPS, BATCH, LR = 600, 16, 4e-3


def learn_tokenizer(stories, vocab):
    """Byte-pair merges over the stories' words (each with its leading space, as run.c's dummy
    prefix and the spaces between words make them)."""
    counts = {}
    for story in stories:
        for word in (" " + story).split(" ")[1:]:
            key = tuple(bytes([b]) for b in (" " + word).encode())
            counts[key] = counts.get(key, 0) + 1
    pieces = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % b for b in range(256)]
    chars = sorted({p for word in counts for p in word})
    pieces += chars
    merges = []
    while len(pieces) + len(merges) < vocab:
        pairs = {}
        for word, n in counts.items():
            for a, b in zip(word, word[1:]):
                pairs[a, b] = pairs.get((a, b), 0) + n
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best[0] + best[1])
        merged = {}
        for word, n in counts.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        counts = merged
    scores = [0.0] * (259 + len(chars)) + [-float(i) for i in range(len(merges))]
    pieces += merges
    return TOKENIZER.Tokenizer(pieces, scores, max(len(p) for p in pieces))


def rotate(x, cos, sin):
    xr, xi = x.reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.stack([xr * cos - xi * sin, xr * sin + xi * cos], dim=-1).flatten(-2)


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        D = DIM // HEADS
        self.wq, self.wk = nn.Linear(DIM, HEADS * D, False), nn.Linear(DIM, KV_HEADS * D, False)
        self.wv, self.wo = nn.Linear(DIM, KV_HEADS * D, False), nn.Linear(HEADS * D, DIM, False)
        self.w1, self.w2 = nn.Linear(DIM, HIDDEN, False), nn.Linear(HIDDEN, DIM, False)
        self.w3 = nn.Linear(DIM, HIDDEN, False)
        self.attention_norm, self.ffn_norm = RMSNorm(DIM), RMSNorm(DIM)

    def forward(self, x, cos, sin):
        B, S, D = x.shape[0], x.shape[1], DIM // HEADS
        h = self.attention_norm(x)
        q = rotate(self.wq(h).view(B, S, HEADS, D), cos, sin).transpose(1, 2)
        k = rotate(self.wk(h).view(B, S, KV_HEADS, D), cos, sin).transpose(1, 2)
        v = self.wv(h).view(B, S, KV_HEADS, D).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(a.transpose(1, 2).reshape(B, S, DIM))
        h = self.ffn_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(DIM)
        D = DIM // HEADS
        freqs = 1.0 / 10000.0 ** (torch.arange(0, D, 2).float() / D)
        angles = torch.outer(torch.arange(SEQ).float(), freqs)
        self.register_buffer("cos", torch.cos(angles), persistent=False)
        self.register_buffer("sin", torch.sin(angles), persistent=False)
        nn.init.normal_(self.tok_embeddings.weight, std=0.02)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        S = tokens.shape[1]
        for layer in self.layers:
            x = layer(x, self.cos[:S], self.sin[:S])
        return self.norm(x) @ self.tok_embeddings.weight.T  # the tied classifier


def arrays_of(model):
    """The tinyattn parameters (import-llama2c's names) of the trained model."""
    out = {"0.W": model.tok_embeddings.weight}
    for i, block in enumerate(model.layers, start=1):
        for mine, theirs in (("attention_norm.gamma", "attention_norm.weight"),
                             ("attention.wq", "wq.weight"), ("attention.wk", "wk.weight"),
                             ("attention.wv", "wv.weight"), ("attention.wo", "wo.weight"),
                             ("ffn_norm.gamma", "ffn_norm.weight"),
                             ("feed_forward.w1", "w1.weight"), ("feed_forward.w2", "w2.weight"),
                             ("feed_forward.w3", "w3.weight")):
            out["%d.%s" % (i, mine)] = block.get_parameter(theirs)
    out["%d.gamma" % (LAYERS + 1)] = model.norm.weight
    return {k: v.detach().numpy().astype(np.float32) for k, v in out.items()}


def main():
    torch.manual_seed(36)
    torch.set_num_threads(1)
    stories = [s.strip() for s in (HERE / "stories.txt").read_text().split("\n\n") if s.strip()]
    tok = learn_tokenizer(stories, VOCAB)
    (HERE / "tokenizer.bin").write_bytes(tok.to_bytes())
    stream = [t for story in stories for t in tok.encode(story)]
    print("tokenizer: %d pieces, %d stories, %d tokens (%.2f bytes a token)"
          % (len(tok), len(stories), len(stream), sum(map(len, stories)) / len(stream)))
    data = torch.tensor(stream)
    model = Decoder()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.01)
    start = time.time()
    for step in range(STEPS + 1):
        at = torch.randint(0, len(data) - SEQ - 1, (BATCH,))
        x = torch.stack([data[i:i + SEQ] for i in at])
        y = torch.stack([data[i + 1:i + SEQ + 1] for i in at])
        loss = F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
        for group in opt.param_groups:
            group["lr"] = LR * min(1.0, (step + 1) / 100) * (0.1 + 0.9 * (1 - step / STEPS))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            print("step %4d  loss %.3f  (%.0f s)" % (step, loss.item(), time.time() - start), flush=True)
    model.eval()
    config = [["Embedding", VOCAB, DIM]] + [
        ["DecoderBlock", DIM, HEADS, KV_HEADS, HIDDEN, SEQ, 1e-5, "pairs", 10000.0]
        for _ in range(LAYERS)] + [["RMSNorm", DIM, 1e-5], ["Classifier", DIM, VOCAB, True]]
    write_checkpoint(HERE / "model.bin", config, arrays_of(model))
    tokens = tok.encode("Once upon a time")
    with torch.no_grad():
        while len(tokens) < 60:
            tokens.append(int(model(torch.tensor([tokens]))[0, -1].argmax()))
    print("greedy:", tok.decode_all(tokens[1:], 1).decode(errors="replace"))
    print("wrote %s and %s (%d parameters)" % (HERE / "model.bin", HERE / "tokenizer.bin",
                                              sum(p.numel() for p in model.parameters())),
          file=sys.stderr)


if __name__ == "__main__":
    main()
