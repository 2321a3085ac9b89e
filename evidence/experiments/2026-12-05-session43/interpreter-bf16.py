"""The interpreter's bf16 rounding (forty-third session): 300 random 5×5 bf16 rows (3·randn), softmax_bench's fused
softmax through Triton's interpreter against torch's own CPU kernels, both against float64: y's error, and the input
gradient's, for a random dy. Run it with the change in place (softmax_bench.interpreter.round_bf16_to_nearest, on at
import) and without (SOFTMAX_BENCH_TRUNCATING_BF16=1 undoes it here, for the record):

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session43/interpreter-bf16.py
"""

import os
import statistics

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

import softmax_bench  # noqa: E402

if os.environ.get("SOFTMAX_BENCH_TRUNCATING_BF16") == "1":
    from triton.runtime import interpreter

    patched = interpreter.InterpreterBuilder.cast_impl
    closure = dict(zip(patched.__code__.co_freevars, (cell.cell_contents for cell in patched.__closure__)))
    interpreter.InterpreterBuilder.cast_impl = closure["cast_impl"]  # the interpreter's own

torch.manual_seed(0)
rows = []
for _ in range(300):
    x = (torch.randn(5, 5) * 3).bfloat16().requires_grad_()
    ours, theirs = softmax_bench.softmax(x, 1, variant="auto"), torch.softmax(x, 1)
    dy = torch.randn_like(ours)
    x64, dy64 = x.detach().double(), dy.double()
    y64 = torch.softmax(x64, 1)
    dx64 = y64 * (dy64 - (y64 * dy64).sum(1, keepdim=True))
    (dx,) = torch.autograd.grad(ours, x, dy)
    (torch_dx,) = torch.autograd.grad(theirs, x, dy)
    rows.append([(ours.double() - y64).abs().max().item(), (theirs.double() - y64).abs().max().item(),
                 (dx.double() - dx64).abs().max().item(), (torch_dx.double() - dx64).abs().max().item()])
for name, column in zip(["ours, y", "torch's, y", "ours, dx", "torch's, dx"], zip(*rows)):
    print(f"{name:12s} worst {max(column):.5f}  mean {statistics.mean(column):.5f}")
