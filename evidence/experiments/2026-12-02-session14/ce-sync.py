"""The fused loss's step with the backward's scale decided on the device (no synchronization) against the tree
before it, which asked the host whether the loss's gradient was 1. One process a tree:
    PYTHONPATH=TREE:scripts python3 ce-sync.py TAG OUT.csv
Each cell: the step (forward and torch.autograd.grad) of a mean (gradient 1) and of a sum over a count (transformers'
num_items_in_batch: gradient 1/n, scaled in place), checked against torch's fp32 loss gradient, timed with the
project's timer; % of one copy of the logits timed in the same process."""
import os
import sys

import torch
import torch.nn.functional as F

import softmax_bench
from config_timing import SETTINGS, copy_gbps, csv_rows
from softmax_bench.timing import measure

tag, out = sys.argv[1], sys.argv[2]
write = csv_rows(out, ["tree", "dtype", "M", "V", "loss", "ms", "ms_p20", "ms_p80", "pct_of_copy", "max_err"])
print(tag, os.path.dirname(softmax_bench.__file__), flush=True)
for dtype in (torch.bfloat16, torch.float32):
    for M, V in ((4096, 128256), (8192, 50257), (16384, 32000)):
        x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
        t = torch.randint(0, V, (M,), device="cuda")
        t[::7] = -100
        n = (t != -100).sum()
        losses = {"mean": lambda x: softmax_bench.cross_entropy(x, t),
                  "sum/n": lambda x: softmax_bench.cross_entropy(x, t, reduction="sum") / n}
        x32 = x.float().clone().requires_grad_()
        (expected,) = torch.autograd.grad(F.cross_entropy(x32, t), x32)
        copy = copy_gbps(dtype, 2 * M * V * dtype.itemsize)
        for name, loss_of in losses.items():
            xg = x.clone().requires_grad_()
            (dx,) = torch.autograd.grad(loss_of(xg), xg)
            err = (dx.float() - expected).abs().max().item()

            def step():
                xs = x.detach().requires_grad_()
                torch.autograd.grad(loss_of(xs), xs)

            m = measure(step, SETTINGS, interpret=False)
            pct = 100 * 2 * M * V * dtype.itemsize / copy / 1e6 / m.ms
            write([tag, str(dtype).split(".")[1], M, V, name, m.ms, m.ms_p20, m.ms_p80, pct, err])
            print(f"{tag} {dtype} {M}x{V} {name}: step {m.ms:.3f} ms ({pct:.1f} % of a copy), err {err:.2e}",
                  flush=True)
