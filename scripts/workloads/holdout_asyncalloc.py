"""Holdout workload `holdout_asyncalloc` (scripts/gpu-holdout.sh): the allocator's memory given back
each step under CUDA's stream-ordered allocator.

Written in session 49, after every rule of docs/CLASSIFICATION.md: holdout_hidden's `free` form
(`torch.cuda.empty_cache()` after every optimizer step, a habit "against fragmentation") in a
process that runs PyTorch's allocator on CUDA's own pool
(`PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync`, set here before CUDA starts, as a launcher
would set it): memory comes from `cudaMallocAsync` and goes back by `cudaFreeAsync`, and
`empty_cache()` synchronizes the device and trims the pool (`cudaDeviceSynchronize`,
`cudaMemPoolTrimTo`), so that the next step's allocations map the memory again. The model is
holdout_hidden's token-classification transformer (4 pre-norm layers, d 512, an 8,192-word head,
batch 16 of 256 tokens, AdamW, fp32). Forms:

  free   `torch.cuda.empty_cache()` after every optimizer step
  fixed  no empty_cache()

Truth row (ROWS): step(free) - step(fixed), untraced, in the traced process's own rounds: the
wait in empty_cache (serialization by the stall classes' definitions) and what the next step's
allocations cost again.
"""
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync")

import torch  # noqa: E402

from holdout_hidden import Run  # noqa: E402  (its free and fixed forms, their step as is)
from scenario_common import main  # noqa: E402

FORMS = ["free", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "free", "fixed", "serialization"),
]

if __name__ == "__main__":
    main("holdout_asyncalloc", FORMS, Run, steps=60, warmup=5)
    print(f"allocator backend: {torch.cuda.get_allocator_backend()}", flush=True)
