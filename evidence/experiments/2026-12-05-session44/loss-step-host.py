"""The Python of an eager training step of the fused loss, its kernels stubbed (launch_kernel does nothing), on a
CPU (as a GPU's host runs it, but for the targets' check a CPU adds): softmax_bench.cross_entropy of 4×96 fp32 logits that need a gradient, forward and loss.backward() (a loss
gradient of 1: the gradient the forward wrote handed on), and a backward of 0.3 (written again), beside
torch.nn.functional.cross_entropy. µs a step, the median of 7 rounds of 2000.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session44/loss-step-host.py
"""

import os
import statistics
import timeit

os.environ["TRITON_INTERPRET"] = "1"  # CPU logits; the kernels are stubbed

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import softmax_bench  # noqa: E402
from softmax_bench.kernels import cross_entropy as kernels  # noqa: E402

kernels.launch_kernel = lambda *args, **kwargs: None
torch._assert_async = lambda *args, **kwargs: None  # the targets' check, off a GPU only: its flag is never written
logits, target = torch.randn(4, 96, requires_grad=True), torch.randint(0, 96, (4,))
point_three = torch.tensor(0.3)


def step(loss_of, dloss=None):
    return lambda: torch.autograd.grad(loss_of(logits, target), logits, dloss)


rows = {"softmax_bench, loss gradient 1": step(softmax_bench.cross_entropy),
        "softmax_bench, loss gradient 0.3": step(softmax_bench.cross_entropy, point_three),
        "torch, loss gradient 1": step(F.cross_entropy),
        "torch, loss gradient 0.3": step(F.cross_entropy, point_three)}
for name, call in rows.items():
    call()
    times = [timeit.timeit(call, number=2000) / 2000 * 1e6 for _ in range(7)]
    print(f"{name:34s} {statistics.median(times):7.1f} µs a step")
