"""Where a cross_entropy call's host time goes (issues 27 and 29). The fifteenth session's sweep of `--op
cross-entropy` measured host_us of 270-930 for our forward and 1050-1820 for our step on the H200, where torch's
eager loss took 17-48 and 186-367: the loss's calls are set by the host, not the GPU. Each row here is timed as
scripts/host-cost.py times a row (its one_round and interleaved: rounds issued behind a GPU sleep, so no launch
waits; host_us per call, the median round), on small logits, so the GPU's time does not matter:

- the whole calls, torch's and ours: forward (no gradient) and step (forward, torch.autograd.grad of the mean);
- their steps: check_arguments; the targets' divisor, scale and check as the torch ops they were before
  (`targets by torch ops`: eleven ops and the assert) and as the one kernel they are now (kernels/cross_entropy
  .targets, and its assert); kernel.launch (chunks, or the rows on a cluster: prologue, cluster, epilogue); the
  mean; scale_unless_one; the registered op's call; autograd's share.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session15/ce-host.py OUT.csv [MxV ...]
Written in the fifteenth session, when no device time was left to run it."""
import csv
import importlib.util
import os
import sys
from functools import partial

import torch
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":  # a dry run through Triton's interpreter: it says only that the script runs
    os.environ["TRITON_INTERPRET"] = "1"
import softmax_bench  # noqa: E402
from softmax_bench.kernels import cross_entropy as kernel  # noqa: E402

sce = sys.modules["softmax_bench.cross_entropy"]
spec = importlib.util.spec_from_file_location("host_cost", os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                                         "scripts", "host-cost.py"))
host_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_cost)

shapes = [tuple(map(int, s.split("x"))) for s in sys.argv[2:]] or [(64, 4000), (64, 32000), (64, 128256)]
out = open(sys.argv[1], "w", newline="")
write = csv.writer(out)
write.writerow(["M", "V", "dtype", "what", "host_us", "call_us", "on_cluster"])
for M, V in shapes:
    for dtype in (torch.bfloat16, torch.float32):
        x = torch.randn(M, V, device=DEVICE).to(dtype)
        t = torch.randint(0, V, (M,), device=DEVICE)
        t[::7] = -100
        rows, targets = x, t
        divisor, scale, ok = kernel.targets(targets, V, -100, None, None, True)

        def targets_by_torch_ops():  # what _loss_and_gradient ran before the targets' kernel (b4721a5)
            bad = ((targets < 0) | (targets >= V)) & (targets != -100)
            torch._assert_async(~bad.any(), "a target is outside the vocabulary")
            count = (targets != -100).sum().to(torch.float32)
            return (1.0 / count).reshape(1)

        losses = torch.empty(M, device=DEVICE)
        grad = torch.empty_like(x)
        one = torch.ones((), device=DEVICE)

        def step(fn):
            xs = x.detach().requires_grad_()
            return torch.autograd.grad(fn(xs, t), xs)[0]

        calls = {
            "torch forward": lambda: F.cross_entropy(x, t),
            "torch step": lambda: step(F.cross_entropy),
            "ours forward": lambda: softmax_bench.cross_entropy(x, t),
            "ours step": lambda: step(softmax_bench.cross_entropy),
            "check_arguments": partial(sce.check_arguments, x, t, -100, "mean", 0.0, 0.0, None, None),
            "targets by torch ops (before)": targets_by_torch_ops,
            "targets kernel and its assert": lambda: torch._assert_async(
                kernel.targets(targets, V, -100, None, None, True)[2], "a target is outside the vocabulary"),
            "kernel.launch, no gradient": partial(kernel.launch, rows, targets, None, -100, 0.0, 0.0, None, None),
            "kernel.launch, gradient": partial(kernel.launch, rows, targets, None, -100, 0.0, 0.0, None, scale),
            "the mean (sum / divisor)": lambda: losses.sum() / divisor,
            "_loss_and_gradient, gradient": partial(sce._loss_and_gradient, x, t, None, -100, "mean", 0.0, 0.0, None,
                                                    True, False),
            "registered op, gradient": partial(sce._cross_entropy, x, t, None, -100, "mean", 0.0, 0.0, None, True),
            "scale_unless_one": partial(kernel.scale_unless_one, grad, one),
        }
        expected = F.cross_entropy(x.float(), t)
        assert torch.allclose(softmax_bench.cross_entropy(x, t), expected, atol=1e-4), "wrong loss"
        timed = host_cost.interleaved(list(calls.values()), *((200, 20, 5) if DEVICE == "cuda" else (2, 1, 1)))
        there = kernel.on_cluster(V, dtype, with_grad=True)
        for what, (host, call) in zip(calls, timed):
            write.writerow([M, V, str(dtype).split(".")[1], what, round(host, 2), round(call, 2), there])
            print(f"{M}x{V} {str(dtype):15} {what:32} host {host:8.2f} us  call {call:8.2f} us"
                  + ("  (rows on a cluster)" if there and "launch" in what else ""), flush=True)
        out.flush()
