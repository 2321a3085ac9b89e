"""Issue 29, item 3: where the compiled training step's host gap goes. step-host.py's model (softmax with a scale
and a keep-mask, then log_softmax of it times 4; 64x4000 bf16; fullgraph; a step is forward then backward of dy)
beside: the same with the `* 4.0` given to our log_softmax as its scale (what folding the constant into our kernel
would save: 4 launches a step, not 6), and each layer alone, ours and torch's; then the two-layer models' forward
alone (x requiring its gradient, no backward run), so that the step's host time splits into forward and backward.
host_us / call_us per step as scripts/host-cost.py times a call, every row's rounds in turn.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session52/step-parts.py
"""

import importlib

import torch

import softmax_bench

host_cost = importlib.import_module("host-cost")
M, N = 64, 4000

MODELS = {
    "torch: both layers": lambda x, keep: torch.log_softmax(
        torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1),
    "ours: both layers": lambda x, keep: softmax_bench.log_softmax(
        softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1),
    "ours: both, *4 as log's scale": lambda x, keep: softmax_bench.log_softmax(
        softmax_bench.softmax(x, scale=0.125, mask=keep), dim=-1, scale=4.0),
    "torch: masked softmax alone": lambda x, keep: torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1),
    "ours: masked softmax alone": lambda x, keep: softmax_bench.softmax(x, scale=0.125, mask=keep),
    "torch: log_softmax alone": lambda x, keep: torch.log_softmax(x, -1),
    "ours: log_softmax alone": lambda x, keep: softmax_bench.log_softmax(x, dim=-1),
}

x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
keep = torch.rand(N, device="cuda") > 0.2
dy = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
steps, grads, names = [], {}, []
for name, fn in MODELS.items():
    torch._dynamo.reset()
    compiled = torch.compile(fn, fullgraph=True)

    def step(compiled=compiled):
        x.grad = None
        compiled(x, keep).backward(dy)

    step()
    grads[name] = x.grad.clone()
    steps.append(step)
    names.append(name)
    if "both layers" in name:
        steps.append(lambda compiled=compiled: compiled(x, keep))
        names.append(f"{name}, forward alone")
for a, b in (("torch: both layers", "ours: both layers"), ("torch: both layers", "ours: both, *4 as log's scale")):
    torch.testing.assert_close(grads[b].float(), grads[a].float(), atol=2e-2, rtol=2e-2)
timed = host_cost.interleaved(steps, 200, 20, 5)
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, bf16 {M}x{N}")
for name, (host, call) in zip(names, timed):
    print(f"{name:34} host_us {host:8.2f} call_us {call:8.2f}")
