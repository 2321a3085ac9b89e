"""Issue 29: where the host's time goes in the two rows the thirty-eighth session left far above torch's, on a GPU
(64×4000 bf16): an eager training step of softmax_bench.softmax (218 µs against torch's 120: forward with a
gradient, then backward) and a call of a new width (auto 152–182 µs against torch's 8–9).

1. The step's host µs as eager-step-host.py times it (host-cost's rounds), with autograd's device thread (the
   default: a CUDA backward runs there, its Python taking the GIL from the caller) and without it
   (torch.autograd.set_multithreading_enabled(False): the backward on the calling thread), ours beside torch's.
2. cProfile of 400 steps of ours on the calling thread (so that the profile sees the backward's Python), and of 200
   calls of auto, each a column wider: the 25 functions of most own time, and the 12 of most time inclusive.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session38/host-profile.py > OUT.txt
"""

import cProfile
import importlib
import pstats

import torch

import softmax_bench

host_cost = importlib.import_module("host-cost")
M, N = 64, 4000
x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
dy = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)


def step(forward):
    def run():
        x.grad = None
        forward().backward(dy)
    return run


ours, torchs = step(lambda: softmax_bench.softmax(x)), step(lambda: torch.softmax(x, -1))
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {__import__('triton').__version__}, "
      f"bf16 {M}x{N}")
for threaded in (True, False):
    with torch.autograd.set_multithreading_enabled(threaded):
        (ours_us, _), (torch_us, _) = host_cost.interleaved([ours, torchs], 200, 20, 5)
    print(f"eager step, autograd's device thread {'on ' if threaded else 'off'}: softmax_bench host_us "
          f"{ours_us:8.2f}, torch {torch_us:8.2f}")


def profiled(title: str, fn, calls: int) -> None:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    profile.disable()
    print(f"\n== {title}: {calls} calls")
    stats = pstats.Stats(profile)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumtime").print_stats(12)


with torch.autograd.set_multithreading_enabled(False):
    profiled("eager step, softmax_bench (backward on the calling thread)", ours, 400)
top = 1 << (N - 1).bit_length()
widths = iter(range(top // 2 + 1, top + 1))
inputs = [torch.randn(M, width, device="cuda", dtype=torch.bfloat16) for width in list(widths)[-201:]]
softmax_bench.softmax(inputs.pop())  # compiled before
following = iter(inputs).__next__
profiled("softmax_bench.softmax, a new width a call", lambda: softmax_bench.softmax(following()), 200)
