"""Issue 29: the host's cost of an eager training step of softmax_bench's softmax, log_softmax (forward, then
backward with a dense dy) and cross_entropy (forward, loss.backward()), beside torch's, on a GPU: host_us /
call_us a step as scripts/host-cost.py times a call (a round issued while the GPU sleeps; a round with the GPU
free), the rows' rounds in turn. Since the thirty-sixth session an eager call with a gradient applies the ops'
autograd formula without the ops (library.EagerAutograd, cross_entropy._EagerAutograd) and the backward replays its
launches (dispatch.replayed_or_backward); `--through-op` adds rows that call the registered op, as every such call
went before.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session36/eager-step-host.py [MxN] [--through-op]
"""

import importlib
import sys

import torch

import softmax_bench

host_cost = importlib.import_module("host-cost")
shape = next((a for a in sys.argv[1:] if "x" in a and not a.startswith("-")), "64x4000")
M, N = map(int, shape.split("x"))
x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16, requires_grad=True)
keep = torch.rand(M, N, device="cuda") > 0.1
dy = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
ops = torch.ops.softmax_bench
target = torch.randint(0, N, (M,), device="cuda")
loss_module = sys.modules["softmax_bench.cross_entropy"]
forms = {
    "softmax": (lambda: softmax_bench.softmax(x), lambda: torch.softmax(x, -1),
                lambda: ops.softmax(x, -1, None, None, False, "auto", None, None)),
    "scaled-masked": (lambda: softmax_bench.softmax(x, scale=0.125, mask=keep),
                      lambda: torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1),
                      lambda: ops.softmax(x, -1, 0.125, keep, False, "auto", None, None)),
    "log_softmax": (lambda: softmax_bench.log_softmax(x), lambda: torch.log_softmax(x, -1),
                    lambda: ops.log_softmax(x, -1, None, None, False, "auto", None, None)),
    "cross-entropy": (lambda: softmax_bench.cross_entropy(x, target),
                      lambda: torch.nn.functional.cross_entropy(x, target),
                      lambda: loss_module._cross_entropy(x, target, None, -100, "mean", 0.0, 0.0, None, True)[0]),
}


def step(forward):
    def run():
        x.grad = None
        out = forward()
        out.backward(dy if out.dim() else None)  # a loss: its own gradient of 1
    return run


rows = []
for form, (ours, torchs, through_op) in forms.items():
    rows += [(f"{form}: softmax_bench", step(ours)), (f"{form}: torch", step(torchs))]
    if "--through-op" in sys.argv:
        rows.append((f"{form}: softmax_bench through the op", step(through_op)))
grads = {}
for name, run in rows:  # each once, checked against torch's
    run()
    grads[name] = x.grad.clone()
for form in forms:
    for name in grads:
        if name.startswith(form + ":"):
            torch.testing.assert_close(grads[name].float(), grads[f"{form}: torch"].float(), atol=2e-2, rtol=2e-2)
timed = host_cost.interleaved([run for _, run in rows], 200, 20, 5)
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {__import__('triton').__version__}, "
      f"bf16 {M}x{N}, eager step (forward, backward)")
for (name, _), (host, call) in zip(rows, timed):
    print(f"{name:42} host_us {host:8.2f} call_us {call:8.2f}")
