"""The fused cross-entropy's chunk and warps on the H200 (issue 27): forward (no gradient: one read) and step
(forward with the gradient, backward) for each (BLOCK bytes, num_warps), as % of a read / a copy timed in the same
process; checked against torch's fp32 loss first.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-01-session11/ce-configs.py OUT.csv [--shipped]

--shipped: the configuration the kernel ships with (kernels/cross_entropy.launch_config) alone.
"""

import sys

import torch
import torch.nn.functional as F

import softmax_bench
from config_timing import SETTINGS, copy_gbps, csv_rows
from softmax_bench.kernels import cross_entropy as kernel
from softmax_bench.timing import measure

SHAPES = {torch.bfloat16: ["4096x128256", "8192x50257", "16384x32000"], torch.float32: ["4096x128256", "8192x50257"]}
CONFIGS = [(16384, 8), (16384, 4), (16384, 16), (8192, 8), (8192, 4), (32768, 16)]
SHIPPED = "--shipped" in sys.argv[2:]
write = csv_rows(sys.argv[1], ["dtype", "M", "V", "block_bytes", "warps", "pass", "ms", "pct", "err"])
for dtype, shapes in SHAPES.items():
    for shape in shapes:
        M, V = (int(v) for v in shape.split("x"))
        x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
        t = torch.randint(0, V, (M,), device="cuda")
        t[::7] = -100
        expected = F.cross_entropy(x.float(), t)
        nbytes = M * V * dtype.itemsize
        read, copy = copy_gbps(dtype, nbytes), copy_gbps(dtype, 2 * nbytes)
        shipped = kernel.launch_config(V, dtype)
        for block_bytes, warps in [(shipped["BLOCK"] * dtype.itemsize, shipped["num_warps"])] if SHIPPED else CONFIGS:
            if not SHIPPED:
                kernel.launch_config = lambda V, dt, b=block_bytes, w=warps: {
                    "BLOCK": b // dt.itemsize, "num_warps": w, "PER_LANE": dt.itemsize == 4}
            err = (softmax_bench.cross_entropy(x, t) - expected).abs().item()
            fwd = measure(lambda: softmax_bench.cross_entropy(x, t), SETTINGS, interpret=False)

            def step():
                xs = x.requires_grad_()
                softmax_bench.cross_entropy(xs, t).backward()
                xs.grad = None

            both = measure(step, SETTINGS, interpret=False)
            x.requires_grad_(False)
            for name, ms, pct in (("forward", fwd.ms, 100 * nbytes / read / 1e6 / fwd.ms),
                                  ("step", both.ms, 100 * 2 * nbytes / copy / 1e6 / both.ms)):
                write([str(dtype)[6:], M, V, block_bytes, warps, name, f"{ms:.4f}", f"{pct:.1f}", f"{err:.2e}"])
            print(dtype, shape, block_bytes, warps, f"fwd {fwd.ms:.3f} ms {100 * nbytes / read / 1e6 / fwd.ms:.1f} %",
                  f"step {both.ms:.3f} ms {100 * 2 * nbytes / copy / 1e6 / both.ms:.1f} %", f"err {err:.1e}", flush=True)
