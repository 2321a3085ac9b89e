"""Issue 29, item 3: the host's cost of a training step of the compiled two-layer model with a keep-mask
(tests/test_compile.py's: softmax with a scale and a mask, then log_softmax of it times 4), with softmax_bench's
ops and with torch's, each compiled with fullgraph. A step: forward, .sum(), backward. host_us / call_us per step
as scripts/host-cost.py times a call (a round issued while the GPU sleeps; a round with the GPU free), rounds in
turn. library.IN_GRAPH as SOFTMAX_BENCH_IN_GRAPH sets it.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session29/step-host.py [MxN]
"""

import importlib
import sys

import torch

import softmax_bench
from softmax_bench import library

host_cost = importlib.import_module("host-cost")
M, N = map(int, (sys.argv[1] if len(sys.argv) > 1 else "64x4000").split("x"))


def ours(x, keep):
    return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1)


def torchs(x, keep):
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1)


x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
keep = torch.rand(N, device="cuda") > 0.2
dy = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
steps = {}
for name, fn in (("torch.compile(torch ops)", torchs), ("torch.compile(softmax_bench ops)", ours)):
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)

    def step(compiled=compiled):
        x.grad = None
        compiled(x, keep).backward(dy)

    step()
    grad = x.grad.clone()
    steps[name] = (step, grad)
(_, reference), (_, grad) = steps.values()
torch.testing.assert_close(grad.float(), reference.float(), atol=2e-2, rtol=2e-2)
timed = host_cost.interleaved([step for step, _ in steps.values()], 200, 20, 5)
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, bf16 {M}x{N}, IN_GRAPH {library.IN_GRAPH}")
for name, (host, call) in zip(steps, timed):
    print(f"{name:36} host_us {host:8.2f} call_us {call:8.2f}")
