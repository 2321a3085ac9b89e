"""The dynamo guards of a compiled masked softmax, softmax_bench.softmax against the same eager torch code, on a CPU
(TRITON_INTERPRET=1: the opaque op). Run: TRITON_INTERPRET=1 PYTHONPATH=. python3 evidence/experiments/2026-12-05-session37/guards.py
2>&1 | grep __guards. Counted in guards.txt (leaf guards: *_MATCH, *GUARD, ALIASING, GLOBAL_STATE, ...)."""
import torch, softmax_bench
import logging
x = torch.randn(4, 8)
mask = torch.rand(4, 8) > 0.3
def f(x, mask, bias):
    return softmax_bench.softmax(x, scale=0.5, mask=mask)
def g(x, mask, bias):
    return torch.softmax((x * 0.5).masked_fill(~mask, float("-inf")), -1)
torch._logging.set_logs(guards=True)
for fn in (f, g):
    c = torch.compile(fn, dynamic=False)
    c(x, mask, None)
