"""The long way's Python for a call with phase copies, on a CPU: cluster's launch of a key-padded bf16 [2, 64, N]
softmax (a [2, 1, N] mask, 64 rows a row of it) with every kernel launch faked (cluster's and the copies': nothing
launched, nothing compiled), cluster taken as if on a GPU, and the call never replayed (CPU tensors): dispatch,
the fusion's checks, the copies' layout and allocation, the configuration and the launch's arguments. N = 16384
(on x's 16-byte grid: no copies) and 16385 (off it: copies). Median µs a call over 7 rounds of 300 calls.

    PYTHONPATH=. python3 evidence/experiments/2026-12-08-session85/longpath-cpu.py
"""

import statistics
import time

import torch

import softmax_bench
from softmax_bench import dispatch
from softmax_bench.kernels import cluster, masking


class Compiled:
    """What a launch returns (a recording would keep it; none is made here: CPU tensors are not replayed)."""


def fake_launch(kernel, grid, *args, **kwargs):
    return Compiled()


cluster.why_not_here = lambda: None
dispatch._resolve = lambda *args, **kwargs: softmax_bench.variants()["cluster"]
cluster.launch_kernel = masking.launch_kernel = fake_launch
masking.interpreted = lambda: True  # phased_rows takes its kernel's branch on CPU tensors
for N in (16384, 16385):
    x = torch.randn(2, 64, N).to(torch.bfloat16)
    keep = torch.rand(2, 1, N) > 0.1
    call = lambda: softmax_bench.softmax(x, scale=0.125, variant="cluster", mask=keep)  # noqa: E731
    for _ in range(20):
        call()
    rounds = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(300):
            call()
        rounds.append(1e6 * (time.perf_counter() - start) / 300)
    where = "on the grid: no copies" if N % 8 == 0 else "off the grid: copies"
    print(f"N = {N} ({where}): {statistics.median(rounds):.1f} µs a call (rounds {min(rounds):.1f}–{max(rounds):.1f})")
