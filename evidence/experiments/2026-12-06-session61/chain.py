"""Issue 29 item 3 (and issue 26 in a model): two of our calls chained in a compiled graph, as step-host.py's model
chains them (a masked softmax with a scale, then log_softmax of it times 4), run as our kernels (two a direction) or
as torch ops that inductor fuses into one kernel a direction (the variant given as `unfused`, whose torch ops keep
softmax_bench's contract for a row masked whole; the eager variant's backward).
1. Host µs a compiled training step (64x4000 bf16, forward then backward of dy), rounds in turn (ROUNDS): torch's
   ops; ours, our kernels; ours, the chain as torch ops (unfused by hand); ours as written (auto: the pass decides).
2. GPU ms of the same step (softmax_bench.timing, L2 clean) at widths WIDTHS (default 1024 4096 16384 32768), bf16 and fp32, 2^24 elements
   (M = 2^24 / N), same rows: where inductor's one kernel a direction beats our two.
3. (PART=calls) µs a step issued back to back (host_cost's call µs: the larger of the host's and the GPU's time),
   ours as our kernels against ours as torch ops, from host-bound to GPU-bound shapes (CALL_CELLS), rounds in turn:
   where between the two the chain as torch ops stops paying.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session61/chain.py [ROUNDS]
    PART=calls PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session61/chain.py [ROUNDS]
"""

import importlib
import os
import sys

import torch

import softmax_bench
from softmax_bench.timing import TimingSettings, measure

host_cost = importlib.import_module("host-cost")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9


def ours(variant):
    def model(x, keep):
        return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep, variant=variant) * 4.0,
                                         dim=-1, variant=variant)
    return model


def theirs(x, keep):
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1)


MODELS = {"torch's ops": theirs, "ours, fused kernels": ours("fused"), "ours, unfused (torch ops)": ours("unfused"),
          "ours, auto": ours("auto")}


def steps_of(M, N, dtype):
    x = torch.randn(M, N, device="cuda", dtype=dtype, requires_grad=True)
    keep = torch.rand(N, device="cuda") > 0.2
    dy = torch.randn(M, N, device="cuda", dtype=dtype)
    expected = torch.func.grad(lambda t: (theirs(t, keep) * dy.double()).sum())(x.detach().double())
    steps = []
    torch._dynamo.reset()  # each cell's models compiled for its shape alone (no dynamic width: our calls opaque)
    for name, fn in MODELS.items():
        model = torch.compile(fn, fullgraph=True, dynamic=False)

        def step(model=model):
            x.grad = None
            model(x, keep).backward(dy)

        step()
        tol = dict(atol=3e-2, rtol=3e-2) if dtype != torch.float32 else dict(atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(x.grad.double(), expected, **tol, msg=lambda m: f"{name} {M}x{N}: {m}")
        steps.append(step)
    return steps


print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {__import__('triton').__version__}")
if os.environ.get("PART") == "calls":
    cells = os.environ.get("CALL_CELLS", "bf16 64x4096 bf16 256x4096 bf16 1024x4096 bf16 4096x4096 bf16 8192x2048 "
                           "fp32 16x16384 fp32 64x16384 fp32 256x16384 fp32 4096x8192").split()
    for dtype, shape in zip(cells[::2], cells[1::2]):
        M, N = map(int, shape.split("x"))
        steps = steps_of(M, N, {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype])
        timed = host_cost.interleaved(steps[1:3], 100, 10, rounds)
        (fh, fc, _), (uh, uc, _) = timed
        print(f"  {dtype} {M}x{N}: our kernels host {fh:7.1f} call {fc:7.1f} µs | torch ops host {uh:7.1f} "
              f"call {uc:7.1f} µs | call × ours {uc / fc:5.3f}", flush=True)
    sys.exit(0)
timed = host_cost.interleaved(steps_of(64, 4000, torch.bfloat16), 200, 20, rounds)
print(f"compiled training step, bf16 64x4000, host µs a step (median of {rounds} rounds taken in turn):")
for name, (host, call, each) in zip(MODELS, timed):
    ratios = sorted(h / t for h, t in zip(each, timed[0][2]))
    print(f"  {name:28} host_us {host:8.2f} call_us {call:8.2f}  × torch {host / timed[0][0]:5.3f} "
          f"(rounds' ratios p20–p80 {ratios[len(ratios) // 5]:.3f}–{ratios[4 * len(ratios) // 5]:.3f})")
settings = TimingSettings()
print("compiled training step, GPU ms (median, p20–p80), L2 clean, 2^24 elements:")
for dtype in (torch.bfloat16, torch.float32):
    for N in map(int, os.environ.get("WIDTHS", "1024 4096 16384 32768").split()):
        M = 2**24 // N
        for name, step in zip(MODELS, steps_of(M, N, dtype)):
            t = measure(step, settings, False)
            print(f"  {str(dtype)[6:]:8} {M}x{N} {name:28} {t.ms:8.4f} ms ({t.ms_p20:.4f}–{t.ms_p80:.4f})", flush=True)
