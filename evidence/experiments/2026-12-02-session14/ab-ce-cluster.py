"""kernels/cross_entropy.CLUSTER_ROWS (a vocabulary row held across a thread-block cluster: one read of the logits,
one write of their gradient) against the chunks (two reads and a write), in alternating rounds: the forward with no
gradient as % of a read of the logits, the step (forward and torch.autograd.grad of a mean) as % of a copy, both
against a copy of the same bytes timed in the round; each checked against torch's fp32 loss and gradient.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session14/ab-ce-cluster.py OUT.csv [--dtype bf16|fp32]
Written in the fourteenth session, when no device time was left to run it."""
import sys

import torch
import torch.nn.functional as F

import softmax_bench
from config_timing import SETTINGS, copy_gbps, csv_rows
from softmax_bench.kernels import cross_entropy as kernel
from softmax_bench.timing import measure

SHAPES = [(4096, 128256), (2048, 151936), (8192, 50257), (16384, 32000)]
dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
chosen = [dtypes[sys.argv[sys.argv.index("--dtype") + 1]]] if "--dtype" in sys.argv else list(dtypes.values())
write = csv_rows(sys.argv[1], ["dtype", "M", "V", "rows", "pass", "round", "ms", "pct", "max_err"])
for dtype in chosen:
    for M, V in SHAPES:
        x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
        t = torch.randint(0, V, (M,), device="cuda")
        t[::7] = -100
        x32 = x.float().clone().requires_grad_()
        expected = F.cross_entropy(x32, t)
        (expected_dx,) = torch.autograd.grad(expected, x32)
        nbytes = M * V * dtype.itemsize

        def step():
            xs = x.detach().requires_grad_()
            return torch.autograd.grad(softmax_bench.cross_entropy(xs, t), xs)[0]

        for round_ in range(3):
            read, copy = copy_gbps(dtype, nbytes), copy_gbps(dtype, 2 * nbytes)
            for rows in ("chunks", "cluster"):
                kernel.CLUSTER_ROWS = rows == "cluster"
                err = max((softmax_bench.cross_entropy(x, t) - expected).abs().item(),
                          (step().float() - expected_dx).abs().max().item())
                forward = measure(lambda: softmax_bench.cross_entropy(x, t), SETTINGS, interpret=False)
                both = measure(step, SETTINGS, interpret=False)
                for pass_, m, pct in (("forward", forward, 100 * nbytes / read / 1e6 / forward.ms),
                                      ("step", both, 100 * 2 * nbytes / copy / 1e6 / both.ms)):
                    write([str(dtype).split(".")[1], M, V, rows, pass_, round_, m.ms, round(pct, 2), err])
                    print(f"{dtype} {M}x{V} {rows:8s} {pass_:8s} round {round_}: {m.ms:.3f} ms, {pct:.1f} %, "
                          f"err {err:.2e}", flush=True)
        del x, x32, expected_dx
kernel.CLUSTER_ROWS = False
