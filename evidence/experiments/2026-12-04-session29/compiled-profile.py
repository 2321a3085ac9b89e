"""Issue 29: where a compiled call's host time goes. compiled_op and torch_compile (softmax, 64x4000 bf16; the
peers as host-cost.py builds them), and the compiled training step of step-host.py, each warmed, then 2000 calls
(steps: 300) under cProfile: the functions with the most time of their own, and the cumulative tree's top.
library.IN_GRAPH as SOFTMAX_BENCH_IN_GRAPH sets it.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session29/compiled-profile.py
"""

import cProfile
import io
import pstats

import torch

import softmax_bench
from softmax_bench import library
from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input

x = cell_input(64, 4000, torch.bfloat16, "cuda")
calls = {name: PEERS[name].make(PLAIN) for name in ("torch_compile", "compiled_op")}
print(f"torch {torch.__version__}, IN_GRAPH {library.IN_GRAPH}")


def step_of(fn):
    xg = torch.randn(64, 4000, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    keep = torch.rand(4000, device="cuda") > 0.2
    dy = torch.randn_like(xg)
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)

    def step():
        xg.grad = None
        compiled(xg, keep).backward(dy)
    return step


def ours(x, keep):
    return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1)


def torchs(x, keep):
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1)


for name, fn, n in [("torch_compile", lambda: calls["torch_compile"](x), 2000),
                    ("compiled_op", lambda: calls["compiled_op"](x), 2000),
                    ("step torch ops", step_of(torchs), 300), ("step softmax_bench ops", step_of(ours), 300)]:
    for _ in range(30):
        fn()
    torch.cuda.synchronize()
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(n):
        fn()
    profile.disable()
    torch.cuda.synchronize()
    for order, count in (("tottime", 22), ("cumulative", 30)):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(count)
        text = out.getvalue()
        print(f"===== {name}: {n} calls, by {order}")
        print(text[text.find("ncalls"):])
