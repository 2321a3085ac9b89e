"""Where the host time of a cross_entropy step goes, function by function (issues 27 and 29). ce-host.csv (this
session, the H200) has our step at 720–1040 µs of host time a call where torch's takes 230, our no-gradient
forward at 160–340 against 22, and the parts it timed one by one (the targets' kernel 34–54, kernel.launch 50–185,
the registered op 230–470) leave some 500 µs of the step unexplained: the autograd of the registered op is the
suspect. cProfile of 200 steps and 200 forwards at 64×128256 bf16 (small logits: the host sets the pace), the
functions taking the most time by their own time and with what they call.
    python3 evidence/experiments/2026-12-02-session16/ce-profile.py [MxV]"""
import cProfile
import io
import pstats
import sys

import torch

import softmax_bench

M, V = map(int, (sys.argv[1] if len(sys.argv) > 1 else "64x128256").split("x"))
x = torch.randn(M, V, device="cuda").to(torch.bfloat16)
t = torch.randint(0, V, (M,), device="cuda")
t[::7] = -100


def step():
    xs = x.detach().requires_grad_()
    return torch.autograd.grad(softmax_bench.cross_entropy(xs, t), xs)[0]


def forward():
    return softmax_bench.cross_entropy(x, t)


for name, call in (("step", step), ("forward", forward)):
    for _ in range(20):
        call()
    torch.cuda.synchronize()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(200):
        call()
    profile.disable()
    torch.cuda.synchronize()
    for order in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats(order).print_stats(30)
        print(f"==== {name}, 200 calls, by {order}\n" + text.getvalue()[-9000:], flush=True)
