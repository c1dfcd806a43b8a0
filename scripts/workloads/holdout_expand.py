"""Holdout workload `holdout_expand` (scripts/gpu-holdout.sh): the allocator's memory given back
each step under PyTorch's expandable segments.

Written in session 50, after every rule of docs/CLASSIFICATION.md: holdout_hidden's `free` form
(`torch.cuda.empty_cache()` after every optimizer step, a habit "against fragmentation") in a
process whose allocator maps its memory into expandable segments
(`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, set here before CUDA starts, as a launcher
would set it; PyTorch's own out-of-memory message recommends it): memory comes from the driver's
virtual memory calls (`cuMemCreate`, `cuMemMap`, `cuMemSetAccess` for each page of the segment),
and `empty_cache()` synchronizes the segment's stream and unmaps and releases its free pages
(`cudaStreamSynchronize`, then `cuMemUnmap` and `cuMemRelease` for each), so that the next step
maps them again. The model is holdout_hidden's token-classification transformer (4 pre-norm
layers, d 512, an 8,192-word head, batch 16 of 256 tokens, AdamW, fp32). Forms:

  free   `torch.cuda.empty_cache()` after every optimizer step
  fixed  no empty_cache()

Truth row (ROWS): step(free) - step(fixed), untraced, in the traced process's own rounds: the
wait in empty_cache (serialization by the stall classes' definitions) and what the next step's
mappings cost again.
"""
import os

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch  # noqa: E402

from holdout_hidden import Run  # noqa: E402  (its free and fixed forms, their step as is)
from scenario_common import main  # noqa: E402

FORMS = ["free", "fixed"]
ROWS = [  # class label, keys summed, broken form, form without the cause, what-if key
    ("serialization", ["serialization"], "free", "fixed", "serialization"),
]

if __name__ == "__main__":
    main("holdout_expand", FORMS, Run, steps=60, warmup=5)
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
    print(f"allocator: {torch.cuda.get_allocator_backend()}, PYTORCH_CUDA_ALLOC_CONF={conf}",
          flush=True)
