"""Holdout workload `holdout_bert` (scripts/gpu-holdout.sh): fine-tuning a BERT-style encoder on
text batches of varying length (dynamic padding).

Written after the rules of session 16 (docs/CLASSIFICATION.md) as a loop no rule was tuned on: a
DistilBERT-sized encoder (6 layers, 768 wide, scaled-dot-product attention with a padding
mask), bf16 autocast, AdamW; a classification head on the first token. The batches (32 texts) are grouped by length as
a length-grouping sampler does, so each step's sequence length differs: 12 batches of 64 to 512
tokens, cycled. Each batch is tokenized from its texts (a pure-Python basic + WordPiece
tokenizer, the slow tokenizer's work) and padded by a collate function in a DataLoader, pinned
and copied with non_blocking=True in every form. Causes, alone and together:

  t  the DataLoader in the main thread (num_workers=0): the host tokenizes each batch while the
     GPU waits; without it 6 worker processes
  m  the batch trimmed to its longest text on the GPU: the collate pads to 512 and the step
     reads the mask's longest row as a Python int (`mask.sum(1).max().item()`) before the
     forward pass; without it the collate returns the length (known on the host) and the step
     trims the same padded batch with it (the same copies and kernels, no sync)

  g  (session 17, after GPU run 69) mixed precision as the usual trainer does it: fp16
     autocast, a GradScaler, gradients clipped to norm 1 and AdamW with foreach kernels, whose
     scaler.step() reads the inf check as a Python bool (a hidden sync after the backward
     pass); without it (`gf`) the same with AdamW(fused=True), which takes the scaler's inf
     check on the GPU (no sync). Both with the 6-worker loader.

  graph  (session 42) fixed's training step replayed from a CUDA graph, one per batch width
         (captured at start on the corpus's own batches, an AdamW of its own, capturable), the
         batches from fixed's 6-worker loader copied into the graph's buffers: what launch
         overhead costs fixed, and so t and m, which launch fixed's kernels (GPU runs 68 and 70:
         their verdict of launch overhead beside a measured cause could not be judged)

Forms: t, m, tm, fixed, g, gf, graph. Truth rows (ROWS): step(form) - step(form without the
cause), untraced, in the traced process's own rounds (run with BENCH_REUSE=1 and STEPS a multiple
of 12: each round's timed steps cover the 12 lengths once); fixed's launch overhead step(fixed) -
step(graph).
"""
import random
import time
import unicodedata

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from scenario_common import Runner, capture_step, main

B, NB, PAD, VOCAB, D, LAYERS, HEADS = 32, 12, 512, 30522, 768, 6, 12
LENS = [64, 384, 128, 512, 96, 256, 160, 448, 192, 320, 224, 288]  # each batch's longest text
FORMS = ["t", "m", "tm", "fixed", "g", "gf", "graph"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("data_starvation", ["data_starvation"], "t", "fixed", "data_starvation"),
    ("data_starvation", ["data_starvation"], "tm", "m", "data_starvation"),
    ("serialization", ["serialization"], "m", "fixed", "serialization"),
    ("serialization", ["serialization"], "tm", "t", "serialization"),
    ("serialization", ["serialization"], "g", "gf", "serialization"),
    ("launch_overhead", ["launch_overhead"], "fixed", "graph", "launch_overhead"),
]
SYL = ["ka", "ro", "mi", "ten", "sa", "lo", "pre", "un", "ing", "ed", "tion", "ver", "al", "is",
       "qu", "ent", "ar", "ox", "el", "us"]


def corpus():
    """NB batches of B texts (seeded): words of 1-4 syllables, some accented or with
    punctuation; batch b's texts have up to about LENS[b] tokens"""
    g = random.Random(11)
    words = ["".join(g.choice(SYL) for _ in range(g.randint(1, 4))) for _ in range(5000)]
    texts = []
    for b in range(NB):
        hi = LENS[b] - 2
        batch = []
        for _ in range(B):
            n = g.randint(hi // 3, hi * 5 // 8)  # about 1.5 tokens a word
            w = [g.choice(words) for _ in range(n)]
            for k in range(0, n, 7):
                w[k] = w[k].capitalize() + g.choice([",", ".", "", "", "é"])
            batch.append(" ".join(w))
        texts.append(batch)
    # the vocabulary: the commoner half of the words whole, every syllable as a piece
    vocab = {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3}
    for w in words[:2500] + SYL + ["##" + s for s in SYL] + list(",.e"):
        vocab.setdefault(w, len(vocab))
    return texts, vocab


class Tokenizer:
    """The slow BERT tokenizer's steps in pure Python: clean and lower-case, strip accents, split
    on whitespace and punctuation, then WordPiece (longest vocabulary prefix first)."""

    def __init__(self, vocab):
        self.vocab = vocab

    def basic(self, text):
        # clean: drop control characters, whitespace to spaces
        clean = []
        for c in text:
            cat = unicodedata.category(c)
            if c in "\t\n\r" or cat == "Zs":
                clean.append(" ")
            elif not cat.startswith("C"):
                clean.append(c)
        # CJK characters set apart, a pass of its own
        spaced = []
        for c in "".join(clean):
            spaced.append(" " + c + " " if 0x4E00 <= ord(c) <= 0x9FFF else c)
        out = []
        for tok in "".join(spaced).split():  # then per token: lower, strip accents, punctuation
            tok = unicodedata.normalize("NFD", tok.lower())
            tok = "".join(c for c in tok if unicodedata.category(c) != "Mn")
            cur = []
            for c in tok:
                if unicodedata.category(c).startswith("P") or c in "$+<=>^`|~":
                    if cur:
                        out.append("".join(cur))
                    out.append(c)
                    cur = []
                else:
                    cur.append(c)
            if cur:
                out.append("".join(cur))
        return " ".join(out).split()

    def wordpiece(self, word):
        chars = list(word)
        if len(chars) > 100:
            return [1]
        ids, start = [], 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    ids.append(self.vocab[piece])
                    break
                end -= 1
            if end == start:
                return [1]
            start = end
        return ids

    def __call__(self, text, limit):
        ids = [2]
        for w in self.basic(text):
            ids.extend(self.wordpiece(w))
        return ids[:limit - 1] + [3]


class Batches(Dataset):
    """Item i: batch i mod NB tokenized and padded (to its longest text, a multiple of 16, or to
    PAD where the step trims it), with its length"""

    def __init__(self, pad_full):
        self.texts, vocab = corpus()
        self.tok = Tokenizer(vocab)
        self.pad_full = pad_full

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        b = i % NB
        rows = [self.tok(t, PAD) for t in self.texts[b]]
        longest = (max(len(r) for r in rows) + 15) // 16 * 16
        width = PAD if self.pad_full else longest
        ids = torch.zeros(B, width, dtype=torch.long)
        mask = torch.zeros(B, width, dtype=torch.bool)
        for k, r in enumerate(rows):
            ids[k, :len(r)] = torch.tensor(r)
            mask[k, :len(r)] = True
        labels = torch.tensor([len(r) % 3 for r in rows])
        return ids, mask, labels, longest


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.out = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x, keep):
        b, l, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, l, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=0.1)
        x = x + F.dropout(self.out(a.transpose(1, 2).reshape(b, l, D)), 0.1, self.training)
        return x + F.dropout(self.down(F.gelu(self.up(self.ln2(x)))), 0.1, self.training)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(PAD, D)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, 3)

    def forward(self, ids, mask):
        x = self.tok(ids) + self.pos.weight[:ids.shape[1]]
        keep = mask[:, None, None, :]
        for layer in self.layers:
            x = layer(x, keep)
        return self.head(self.ln(x[:, 0]))


_SHARED = []


def shared():
    if not _SHARED:
        m = Encoder().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=2e-5)
        fused = torch.optim.AdamW(m.parameters(), lr=2e-5, fused=True)
        _SHARED.extend([m, opt, fused])
    return _SHARED


_GRAPHS = {}


def graphed(model):
    """fixed's step captured once per batch width (the corpus's NB batches, tokenized here once):
    width -> (graph, ids, mask, labels), static buffers filled with that batch for the capture's
    warm-up steps (real steps on the shared model: its values must be a real batch's)"""
    if not _GRAPHS:
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5, capturable=True)
        batches = Batches(False)
        for b in range(NB):
            ids, mask, labels, _ = batches[b]
            if ids.shape[1] in _GRAPHS:
                continue
            bufs = (ids.cuda(), mask.cuda(), labels.cuda())

            def body(bufs=bufs):
                with torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False):
                    loss = F.cross_entropy(model(bufs[0], bufs[1]).float(), bufs[2])
                loss.backward()
                opt.step()

            _GRAPHS[ids.shape[1]] = (capture_step(opt, body, mode="thread_local"),) + bufs
    return _GRAPHS


class Run(Runner):
    def __init__(self, form):
        self.graphs = graphed(shared()[0]) if form == "graph" else None
        causes = "" if form in ("fixed", "gf", "graph") else form
        self.read_len = "m" in causes
        self.model, self.opt, fused = shared()
        self.scaler = torch.amp.GradScaler("cuda") if form in ("g", "gf") else None
        if form == "gf":
            self.opt = fused
        self.model.train()
        workers = 0 if "t" in causes else 6
        self.dl = DataLoader(Batches(self.read_len), batch_size=None, shuffle=False,
                             pin_memory=True, num_workers=workers,
                             persistent_workers=workers > 0,
                             prefetch_factor=4 if workers else None,
                             multiprocessing_context="fork" if workers else None)
        self.it = iter(self.dl)
        if workers:
            time.sleep(1.0)  # let the workers start and fill their queues (not timed)
        self.keep = []

    def step(self):
        ids, mask, labels, longest = next(self.it)
        if self.graphs is not None:  # the batch into its width's graph, fixed's step replayed
            g, gi, gm, gl = self.graphs[ids.shape[1]]
            gi.copy_(ids, non_blocking=True)
            gm.copy_(mask, non_blocking=True)
            gl.copy_(labels, non_blocking=True)
            g.replay()
            return
        ids, mask = ids.cuda(non_blocking=True), mask.cuda(non_blocking=True)
        labels = labels.cuda(non_blocking=True)
        if self.read_len:
            longest = (int(mask.sum(1).max().item()) + 15) // 16 * 16
            ids, mask = ids[:, :longest], mask[:, :longest]
        half = torch.float16 if self.scaler else torch.bfloat16
        with torch.autocast("cuda", dtype=half):
            loss = F.cross_entropy(self.model(ids, mask).float(), labels)
        self.opt.zero_grad(set_to_none=True)
        if self.scaler:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.opt)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()
        self.keep.append(loss.detach())
        del self.keep[:-200]

    def close(self):
        if self.keep:
            torch.stack(self.keep).cpu()
        del self.it
        del self.dl


if __name__ == "__main__":
    main("holdout_bert", FORMS, Run, steps=12, warmup=4)
