"""A call of ours whose x inductor computes with an op that cannot be folded (`softmax(x + b)`: an additive mask or
bias written as a sum, as transformers' eager attention writes it): our kernel after inductor's add (two kernels,
x + b written and read again), against the call as torch ops (the unfused variant by hand), which inductor fuses with
the add into one kernel, and torch.compile of torch.softmax(x + b). Forward only (inference) and forward + backward
(x and b requiring gradients: training), b of x's shape.
1. µs a call (host_cost's host and call µs, rounds in turn) at host-bound shapes (SMALL).
2. GPU ms (softmax_bench.timing, L2 clean) at 2^24 elements, widths WIDTHS.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session61/prologue.py [ROUNDS]
"""

import importlib
import os
import sys

import torch

import softmax_bench
from softmax_bench.timing import TimingSettings, measure

host_cost = importlib.import_module("host-cost")
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
MODELS = {"torch.compile": lambda x, b: torch.softmax(x + b, -1),
          "ours, auto": lambda x, b: softmax_bench.softmax(x + b),
          "ours, unfused (torch ops)": lambda x, b: softmax_bench.softmax(x + b, variant="unfused")}


def no_grad(fn):
    def call():
        with torch.no_grad():
            fn()
    return call


def calls_of(M, N, dtype, train):
    torch._dynamo.reset()
    x = torch.randn(M, N, device="cuda", dtype=dtype, requires_grad=train)
    b = torch.randn(M, N, device="cuda", dtype=dtype, requires_grad=train)
    dy = torch.randn(M, N, device="cuda", dtype=dtype)
    expected = torch.softmax(x.detach().double() + b.detach().double(), -1)
    fns = []
    for name, fn in MODELS.items():
        model = torch.compile(fn, fullgraph=True, dynamic=False)

        def call(model=model):
            if not train:
                return model(x, b)
            x.grad = b.grad = None
            model(x, b).backward(dy)

        with torch.no_grad() if not train else torch.enable_grad():
            y = model(x, b)
        tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else dict(atol=4e-3, rtol=2e-2)
        torch.testing.assert_close(y.detach().double(), expected, **tol, msg=lambda m: f"{name} {M}x{N}: {m}")
        fns.append(call if train else no_grad(call))
        fns[-1]()
    return fns


print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {__import__('triton').__version__}")
cells = os.environ.get("SMALL", "bf16 64x4096 bf16 512x4096 fp32 64x4096 bf16 16x32768").split()
dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
for train in (False, True):
    print(f"µs a call, {'forward + backward' if train else 'forward'} ({rounds} rounds in turn):")
    for dtype, shape in zip(cells[::2], cells[1::2]):
        M, N = map(int, shape.split("x"))
        fns = calls_of(M, N, dtypes[dtype], train)
        timed = host_cost.interleaved(fns, 100, 10, rounds)
        print(f"  {dtype} {M}x{N}: " + " | ".join(f"{name} host {h:6.1f} call {c:6.1f}"
                                                 for name, (h, c, _) in zip(MODELS, timed)), flush=True)
settings = TimingSettings()
for train in (False, True):
    print(f"GPU ms, {'forward + backward' if train else 'forward'}, 2^24 elements (median, p20–p80):")
    for dtype in ("bf16", "fp32"):
        for N in map(int, os.environ.get("WIDTHS", "1024 4096 16384 32768").split()):
            M = 2**24 // N
            fns = calls_of(M, N, dtypes[dtype], train)
            for name, fn in zip(MODELS, fns):
                t = measure(fn, settings, False)
                print(f"  {dtype} {M}x{N} {name:26} {t.ms:8.4f} ms ({t.ms_p20:.4f}–{t.ms_p80:.4f})", flush=True)
