"""Where the fused loss's step and forward lose their time (issue 27), after the twenty-sixth session's changes: no
prologue (each row's factor read by the cluster kernel from the row's target, the class weights and the loss's scale),
one program that finishes the rows and sums them (the epilogue and torch's sum before), the targets' check a
device-side assert in the kernels (torch's _assert_async before), and a forward with no gradient on a cluster two
kernels (the finishing program doing the targets' work). Each piece timed alone (softmax_bench.timing.measure, the
sweep's timer), % of a copy of the same bytes (with the gradient: a read and a write of the logits; the forward: a
read); then the kernels of one step and of one forward on the GPU's timeline (torch.profiler, queued behind a GPU
sleep as the timer queues them). The twenty-fifth session's version of this script (2026-12-03-session25) measured
the code before.
Prediction (bf16 against 2026-12-03-session25/ce-split/4-final): the step 8–15 µs shorter (the prologue, the sum
and the assert with a gap each): 151936 87.7 → ≥ 90 % of a copy, 50257 89.4 → ≥ 92; the forward with no gradient
151936 87.7 → ≥ 92 % of a read, 50257 93.3 → ≥ 95.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session26/ce-split.py OUT.csv
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
        "loss kernel, gradient": (lambda: cluster.launch_cross_entropy(x, dx, lse, t, None, scale), 2),
        "loss kernel, no gradient": (lambda: cluster.launch_cross_entropy(x, None, lse), 1),
        "launch, gradient (3 kernels)": (lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, True), 2),
        "launch, no gradient (2 kernels)": (lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, False), 1),
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
    if dtype == torch.bfloat16 and V in (151936, 50257):
        timeline(step, f"{name} {V} step")
        timeline(lambda: softmax_bench.cross_entropy(x, t), f"{name} {V} forward")
    del x, dx
