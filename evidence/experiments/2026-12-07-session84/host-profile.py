"""Where a launch with phase copies spends its host time (session 84's sweeps: host_us 328–416 µs a call, against
21–26 read in place, where the call is replayed): auto's call at key-padded and biased rows/64 bf16 8192x50257
([128, 64, 50257] x, a [128, 1, 50257] mask or bias), CALLS calls after a warm-up, under cProfile, the device
synchronized once at the end; the wall µs a call, then the 30 functions of most cumulative time.

    python3 host-profile.py
"""

import cProfile
import pstats
import time

import torch

import softmax_bench

CALLS = 200
x = torch.randn(128, 64, 50257, device="cuda").to(torch.bfloat16)
for name, fused in (("key-padded", {"mask": torch.rand(128, 1, 50257, device="cuda") > 0.1}),
                    ("biased rows/64", {"bias": torch.randn(128, 1, 50257, device="cuda").to(torch.bfloat16)})):
    call = lambda: softmax_bench.softmax(x, scale=0.125, variant="auto", **fused)  # noqa: E731
    for _ in range(5):
        call()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(CALLS):
        call()
    host_us = 1e6 * (time.perf_counter() - start) / CALLS  # (the queue may fill: then the device sets the pace)
    torch.cuda.synchronize()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(CALLS):
        call()
    profile.disable()
    torch.cuda.synchronize()
    print(f"== {name}: {host_us:.1f} µs a call, back to back, unprofiled")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
