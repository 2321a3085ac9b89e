"""Where the fused loss's step loses its time (issue 27): the step at 4096×128256 bf16 ran at 80.5 % of a copy of the
logits (cross-entropy-quack-h200) where the cluster softmax of the same rows runs at 97 %, and, compiled for sm_90,
the loss's cluster kernel with the gradient has the softmax's loads, stores and registers (72 against 71).
Each piece of a step timed alone (softmax_bench.timing.measure, the sweep's timer), % of a copy of the same bytes
(the step and its pieces with the gradient: a read and a write of the logits; the forward: a read); then one step's
kernels on the GPU's timeline (torch.profiler, the step queued behind a GPU sleep as the timer queues it).
Prediction: the cluster kernel with the gradient within 2 points of the softmax; the rest of the step's 17 points in
the kernels around it and the gaps between them.
Run four times (next.sh ce-split; outputs in ce-split/): 1-base at a394d0b; 2-factor with the factor loaded with the
row; 3-loss-in-kernel with the targets, the loss's scale and the loss read and written by the cluster kernel (no
prologue; no epilogue with no gradient): 4–10 registers more, and slower where that cost a CTA an SM; 4-final with
the factor loaded with the row, no prologue with no gradient, and the rows' losses divided in the epilogue. The
third called cluster.launch_cross_entropy(x, dx, t, None, scale, lse, losses, -100) and kernel.launch with its
gradient's two kernels.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-03-session25/ce-split.py OUT.csv
"""
import json
import os
import sys
import tempfile

import torch
import torch.nn.functional as F

import softmax_bench
from config_timing import SETTINGS, copy_gbps, csv_rows
from softmax_bench.cross_entropy import _loss_and_gradient
from softmax_bench.kernels import cluster
from softmax_bench.kernels import cross_entropy as kernel
from softmax_bench.timing import measure

CELLS = [(torch.bfloat16, 4096, 128256), (torch.bfloat16, 8192, 50257), (torch.bfloat16, 2048, 151936),
         (torch.float32, 8192, 50257)]
write = csv_rows(sys.argv[1], ["dtype", "M", "V", "piece", "ms", "pct", "of"])


def timeline(step, label):
    """One step's device kernels (name, start µs from the first, µs) queued behind a GPU sleep."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        torch.cuda._sleep(50_000_000)
        step()
        torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    events = [e for e in json.load(open(path))["traceEvents"] if e.get("cat") == "kernel"]
    events = [e for e in sorted(events, key=lambda e: e["ts"]) if "sleep" not in e["name"].lower()]
    t0 = events[0]["ts"]
    end = t0
    for e in events:
        gap = e["ts"] - end
        print(f"  {label}: +{e['ts'] - t0:8.1f} µs  {e['dur']:8.1f} µs  gap {gap:6.1f}  {e['name'][:90]}", flush=True)
        end = e["ts"] + e["dur"]
    print(f"  {label}: span {end - t0:.1f} µs, kernels {sum(e['dur'] for e in events):.1f} µs", flush=True)


for dtype, M, V in CELLS:
    name = str(dtype).split(".")[1]
    x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
    t = torch.randint(0, V, (M,), device="cuda")
    t[::7] = -100
    nbytes = M * V * dtype.itemsize
    dx = torch.empty_like(x)
    factor = torch.full((M,), 1.0 / M, device="cuda")
    lse = torch.empty(M, device="cuda")
    scale = torch.full((1,), 1.0 / M, device="cuda")

    def step():
        xs = x.detach().requires_grad_()
        return torch.autograd.grad(softmax_bench.cross_entropy(xs, t), xs)[0]

    x32 = x.to(torch.float32, copy=True).requires_grad_()  # not x itself where x is fp32: its forward would get a gradient
    expected = F.cross_entropy(x32, t)
    (expected_dx,) = torch.autograd.grad(expected, x32)
    err = max((softmax_bench.cross_entropy(x, t) - expected).abs().item(),
              (step().float() - expected_dx).abs().max().item())
    print(f"{name} {M}x{V}: max error against torch's fp32 {err:.2e}", flush=True)
    del x32, expected_dx
    pieces = {
        "softmax (cluster)": (lambda: softmax_bench.softmax(x, variant="cluster"), 2),
        "loss kernel, gradient": (lambda: cluster.launch_cross_entropy(x, dx, factor, lse), 2),
        "loss kernel, no gradient": (lambda: cluster.launch_cross_entropy(x, None, None, lse), 1),
        "launch, gradient (3 kernels)": (lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, scale, True), 2),
        "forward with gradient": (lambda: _loss_and_gradient(x, t, None, -100, "mean", 0.0, 0.0, None, True,
                                                             False), 2),
        "step": (step, 2),
        "forward, no gradient": (lambda: softmax_bench.cross_entropy(x, t), 1),
    }
    copies = {1: copy_gbps(dtype, nbytes), 2: copy_gbps(dtype, 2 * nbytes)}
    for piece, (call, reads_writes) in pieces.items():
        if piece.startswith("loss kernel") and not kernel.on_cluster(V, dtype, False, "no gradient" not in piece):
            continue
        m = measure(call, SETTINGS, interpret=False)
        pct = 100 * reads_writes * nbytes / copies[reads_writes] / 1e6 / m.ms
        write([name, M, V, piece, m.ms, round(pct, 2), "copy" if reads_writes == 2 else "read"])
        print(f"{name} {M}x{V} {piece:>30}: {m.ms:.4f} ms, {pct:5.1f} % of a {'copy' if reads_writes == 2 else 'read'}"
              f", host {m.host_us:.0f} µs", flush=True)
    if dtype == torch.bfloat16 and V in (128256, 50257):
        timeline(step, f"{name} {V} step")
    del x, dx
