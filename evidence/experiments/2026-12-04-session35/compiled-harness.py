"""Host µs a call of a compiled masked softmax on CPU: the harness's ways of compiling and calling (thirty-fifth
session; output in compiled-harness.txt).
    python3 evidence/experiments/2026-12-04-session35/compiled-harness.py
"""
import functools
import statistics
import time

import torch

torch.set_num_threads(1)
x = torch.randn(4, 8)
mask = torch.rand(4, 8) > 0.2

def eager(x):
    return torch.softmax(x.masked_fill(~mask, float("-inf")) * 0.125, dim=-1)

def model(x, mask, bias):
    y = x.masked_fill(~mask, float("-inf")) * 0.125
    return torch.softmax(y if bias is None else y + bias, dim=-1)

def make(way):
    torch._dynamo.reset()
    if way == "closure":
        return torch.compile(eager, dynamic=False)
    if way == "closure fullgraph":
        return torch.compile(eager, fullgraph=True, dynamic=False)
    if way == "partial kwargs fullgraph":
        return functools.partial(torch.compile(model, fullgraph=True, dynamic=False), mask=mask, bias=None)
    if way == "partial kwargs":
        return functools.partial(torch.compile(model, dynamic=False), mask=mask, bias=None)
    if way == "lambda positional fullgraph":
        c = torch.compile(model, fullgraph=True, dynamic=False)
        return lambda x: c(x, mask, None)
    if way == "lambda positional":
        c = torch.compile(model, dynamic=False)
        return lambda x: c(x, mask, None)

ways = ["closure", "closure fullgraph", "partial kwargs", "partial kwargs fullgraph", "lambda positional",
        "lambda positional fullgraph"]
results = {w: [] for w in ways}
calls = 2000
for r in range(7):
    for w in ways:
        torch._dynamo.reset()
        f = make(w)
        for _ in range(50):
            f(x)
        t = time.perf_counter()
        for _ in range(calls):
            f(x)
        results[w].append((time.perf_counter() - t) / calls * 1e6)
for w in ways:
    print(f"{w:30s} median {statistics.median(results[w]):6.2f} µs  range {min(results[w]):.2f}–{max(results[w]):.2f}")
print("torch", torch.__version__)
