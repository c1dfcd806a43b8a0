"""Holdout workload `holdout_speech` (scripts/gpu-holdout.sh): a CTC speech recognizer's training
loop.

Written in session 32 as a loop no rule was tuned on: an acoustic model trained with CTC on
synthetic 16 kHz audio of variable length. A batch holds 32 utterances of 4 to 8 s (64,000 to
128,000 samples, zero-padded to the batch's longest, sorted longest first as length-sorted
batching leaves them) with transcripts of 40 to 80 tokens of a 32-symbol vocabulary (blank 0).
Features: a log-mel spectrogram (torch.stft with n_fft 400, hop 160 and a Hann window; the power;
an 80 x 201 matrix of triangular mel filters; log(x + 1e-6)), len // 160 + 1 frames an utterance
(401 to 801). Model, about 15M parameters: two Conv1d layers over time, the first of stride 2
((frames + 1) // 2 steps, 201 to 401); three bidirectional LSTM layers of 512 each way, each run
on a packed sequence (pack_padded_sequence, the LSTM, pad_packed_sequence, then a projection
1024 -> 512 and tanh, as ESPnet's BLSTMP encoder stacks them); a linear layer to the vocabulary,
log_softmax and F.ctc_loss (fp32, mean over the batch); AdamW, the gradient clipped to norm 5. A
pool of 8 batches is made once (each utterance from its own seed) and cycled. Forms:

  g      the waveforms on the GPU, the features computed there, and the lengths kept on the GPU
         as CUDA tensors (the frame counts computed there from the sample counts). Each of the
         three packing calls needs its lengths on the host (`lengths.cpu()`, as users write it:
         pack_padded_sequence refuses CUDA lengths), so the host waits for the GPU to drain
         before each LSTM layer and then launches it while the GPU waits; F.ctc_loss also copies
         its CUDA lengths to the host inside the call
  c      the loader in the main thread: each utterance's samples made again on the host from its
         seed (a stand-in for decoding its audio file), its features computed there one utterance
         at a time (torch.stft, the mel matmul, log), the batch padded, pinned and copied with
         non_blocking=True; lengths on the host. The GPU waits for the loader between steps
  fixed  the waveforms and the features on the GPU, the lengths kept on the host as int64 CPU
         tensors (frame counts from the known sample counts by integer arithmetic): the packing
         calls and F.ctc_loss copy no lengths, and there is no loader work

F.ctc_loss waits for the GPU in every form: its CUDA kernels read the lengths and the targets'
offsets from device arrays that it makes from host values with blocking host-to-device copies
(at::tensor(lengths, cuda options) and .cuda(): three in the forward pass, one in the mean
reduction, three in the backward pass), each a copy followed by a stream synchronize. So `fixed`
is not free of waits: in every form the host waits once at the loss and once at the start of the
backward pass; g's extra waits are the three before the LSTM layers (the two copies inside
F.ctc_loss come right before its own waits and add little). pack_padded_sequence runs with
enforce_sorted=True on the sorted batches: with enforce_sorted=False it copies the sort order to
the GPU (a blocking copy) and pad_packed_sequence copies the inverse order back to the host, two
more waits a layer in every form.

Truth rows (ROWS): step(form) - step(fixed), untraced, in the traced process's own rounds.
"""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from scenario_common import Runner, main

SR, N_FFT, HOP, N_MELS = 16000, 400, 160, 80
B, POOL, MIN_S, MAX_S = 32, 8, 4, 8
V, MIN_TOK, MAX_TOK = 32, 40, 80
CONV, HID, PROJ, LAYERS = 256, 512, 512, 3
GRAD_CLIP = 5.0
LOG_FLOOR = math.log(1e-6)  # the feature of a frame of zeros (padding)
FORMS = ["g", "c", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "g", "fixed", "serialization"),
    ("data_starvation", ["data_starvation"], "c", "fixed", "data_starvation"),
]
_SHARED = []


def mel_filterbank():
    """(N_MELS, N_FFT // 2 + 1) float32: triangular filters equally spaced on the mel scale
    from 0 Hz to SR / 2, applied to a power spectrum's bins"""
    freqs = torch.linspace(0.0, SR / 2, N_FFT // 2 + 1, dtype=torch.float64)
    top = 2595.0 * math.log10(1.0 + (SR / 2) / 700.0)
    mels = torch.linspace(0.0, top, N_MELS + 2, dtype=torch.float64)
    hz = 700.0 * (torch.pow(10.0, mels / 2595.0) - 1.0)
    lower, centre, upper = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    rise = (freqs[None, :] - lower) / (centre - lower)
    fall = (upper - freqs[None, :]) / (upper - centre)
    return torch.clamp(torch.minimum(rise, fall), min=0.0).float()


def logmel(wave, window, fb):
    """log-mel features of waveforms (..., samples) -> (..., N_MELS, samples // HOP + 1), on the
    waveforms' device (window and fb on the same one)"""
    spec = torch.stft(wave, N_FFT, hop_length=HOP, win_length=N_FFT, window=window, center=True,
                      pad_mode="reflect", return_complex=True)
    power = spec.abs().square()
    return torch.log(torch.matmul(fb, power) + 1e-6)


def synth(seed, n):
    """one utterance's n samples (float32, on the host, the same for the same seed): a random
    pitch with two harmonics and some noise, under a loudness that changes every 100 ms"""
    f0 = random.Random(seed).uniform(90.0, 250.0)
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(n, dtype=torch.float32) * (2.0 * math.pi * f0 / SR)
    w = torch.sin(t) + 0.5 * torch.sin(2.0 * t) + 0.25 * torch.sin(3.0 * t)
    w = 0.1 * w + 0.02 * torch.randn(n, generator=g)
    env = torch.rand(n // 1600 + 1, generator=g).repeat_interleave(1600)[:n]
    return w * env


def make_batch(k):
    """batch k of the pool: sample counts sorted longest first, transcripts, the waveforms on the
    GPU; the host's copies of the counts and the seeds for the loader of form c"""
    g = torch.Generator().manual_seed(100 + k)
    n = torch.randint(MIN_S * SR, MAX_S * SR + 1, (B,), generator=g)
    n = torch.sort(n, descending=True).values
    tlen = torch.randint(MIN_TOK, MAX_TOK + 1, (B,), generator=g)
    tgt = torch.randint(1, V, (B, MAX_TOK), generator=g)
    ns = n.tolist()
    seeds = [1000 * (k + 1) + i for i in range(B)]
    wave = torch.zeros(B, ns[0])
    for i in range(B):
        wave[i, :ns[i]] = synth(seeds[i], ns[i])
    return {
        "n_list": ns, "seeds": seeds,
        "n_host": n, "tlen_host": tlen, "tgt_pinned": tgt.pin_memory(),
        "wave": wave.cuda(), "n": n.cuda(), "tlen": tlen.cuda(), "tgt": tgt.cuda(),
    }


class Block(nn.Module):
    """one bidirectional LSTM layer on the packed batch, then a projection and tanh"""

    def __init__(self, din):
        super().__init__()
        self.rnn = nn.LSTM(din, HID, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * HID, PROJ)

    def forward(self, x, lens):
        # lens: int64 frame counts, sorted longest first; .cpu() is a no-op for a host tensor
        packed = pack_padded_sequence(x, lens.cpu(), batch_first=True, enforce_sorted=True)
        y, _ = self.rnn(packed)
        y, _ = pad_packed_sequence(y, batch_first=True, total_length=x.shape[1])
        return torch.tanh(self.proj(y))


class Speech(nn.Module):
    def __init__(self):
        super().__init__()
        self.front = nn.Sequential(
            nn.Conv1d(N_MELS, CONV, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(CONV, PROJ, 3, padding=1), nn.ReLU())
        self.blocks = nn.ModuleList([Block(PROJ) for _ in range(LAYERS)])
        self.out = nn.Linear(PROJ, V)

    def forward(self, feats, lens):
        """feats (B, N_MELS, frames) -> log-probabilities (B, (frames + 1) // 2, V)"""
        x = self.front(feats).transpose(1, 2)
        for blk in self.blocks:
            x = blk(x, lens)
        return F.log_softmax(self.out(x), dim=-1)


def shared():
    if not _SHARED:
        m = Speech().cuda()
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
        fb = mel_filterbank()
        win = torch.hann_window(N_FFT)
        batches = [make_batch(k) for k in range(POOL)]
        _SHARED.extend([m, opt, batches, fb, win, fb.cuda(), win.cuda()])
    return _SHARED


class Run(Runner):
    def __init__(self, form):
        self.form = form
        self.model, self.opt, self.batches, self.fb, self.win, self.fb_d, self.win_d = shared()
        self.model.train()
        self.params = list(self.model.parameters())
        self.i = 0
        self.losses = []

    def host_features(self, b):
        """form c's loader: each utterance decoded (made again from its seed) and its features
        computed on the host, one utterance at a time, padded into one batch"""
        ns = b["n_list"]
        out = torch.full((B, N_MELS, ns[0] // HOP + 1), LOG_FLOOR)
        for i in range(B):
            f = logmel(synth(b["seeds"][i], ns[i]), self.win, self.fb)
            out[i, :, :f.shape[1]] = f
        return out

    def step(self):
        b = self.batches[self.i % POOL]
        self.i += 1
        if self.form == "c":
            feats = self.host_features(b).pin_memory().cuda(non_blocking=True)
            tgt = b["tgt_pinned"].cuda(non_blocking=True)
        else:
            feats = logmel(b["wave"], self.win_d, self.fb_d)
            tgt = b["tgt"]
        # frames after the stride-2 front end: (n // HOP + 1 + 1) // 2
        if self.form == "g":
            lens = (b["n"] // HOP + 2) // 2  # on the GPU
            tlen = b["tlen"]
        else:
            lens = (b["n_host"] // HOP + 2) // 2  # on the host
            tlen = b["tlen_host"]
        logp = self.model(feats, lens)
        loss = F.ctc_loss(logp.transpose(0, 1), tgt, lens, tlen, blank=0, reduction="mean",
                          zero_infinity=True)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.params, GRAD_CLIP)
        self.opt.step()
        self.losses.append(loss.detach())
        del self.losses[:-50]

    def close(self):
        if self.losses:
            torch.stack(self.losses).cpu()


if __name__ == "__main__":
    main("holdout_speech", FORMS, Run, steps=32, warmup=8)
