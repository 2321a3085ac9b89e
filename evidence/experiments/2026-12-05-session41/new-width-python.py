"""Issue 29: softmax_bench's Python in a call of a width not seen before, on a machine with no GPU: auto dispatched as
on the H200 (its table), every Triton launch a no-op (host-cost.no_launch), 1000 calls of bf16 64×N for N = 2099 …
3098, each a new width (so a new auto choice, new launch configurations, no replay). µs a call, then cProfile of 950
more by own time.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session41/new-width-python.py
"""

import cProfile
import importlib
import pstats
import time

import torch

import softmax_bench

host_cost = importlib.import_module("host-cost")
torch.cuda.get_device_name = lambda device=None: "NVIDIA H200"
xs = [torch.randn(64, n, dtype=torch.bfloat16) for n in range(2049, 4097)]
with host_cost.no_launch():
    for x in xs[:50]:
        softmax_bench.softmax(x)
    start = time.perf_counter()
    for x in xs[50:1050]:
        softmax_bench.softmax(x)
    print(f"µs a call: {(time.perf_counter() - start) / 1000 * 1e6:.2f}")
    profile = cProfile.Profile()
    profile.enable()
    for x in xs[1050:2000]:
        softmax_bench.softmax(x)
    profile.disable()
pstats.Stats(profile).sort_stats("tottime").print_stats(12)
