"""Issue 26, the H200's wide cluster rows: is what they miss paid once a launch, or row by row?

At 512×262144 a biased bf16 row is a cluster of 16 CTAs; at most some 16 clusters are resident at once (2 CTAs an
SM), so the 512 rows run in ~32 waves. For each spec, the cluster kernel (config_for's configuration, as auto
launches it) and a copy of the same bytes (the op's floor, one_pass_traffic) are timed at M = 16 … 2048 rows, the
two in turn. A straight line through each (ms = fixed + per_row · M, least squares over M ≥ 64) splits a time
into what a launch pays once (ramp, tail) and what every row pays. If the kernel's per-row time is the copy's
and its fixed time larger, the rows are at a copy's speed and what is missed is the launch's ramp and tail; if the
kernel's per-row time is over the copy's by what the cell misses, every wave pays it (the phases of a cluster:
loads, the exchange, stores, not overlapped between waves) and a persistent cluster that loads its next row while
it finishes one is what would gain. The plain bf16 softmax at 262144 (at the bar on the H200) is the control.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session58/waves.py OUT.csv
"""

import sys

import torch

from config_timing import SETTINGS, csv_rows
from softmax_bench import ops
from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import DTYPES, PLAIN, cluster, one_pass_traffic
from softmax_bench.timing import measure

ROWS = (16, 32, 64, 128, 256, 512, 1024, 2048)
SPECS = (("bf16", "biased", 262144), ("bf16", "plain", 262144), ("fp32", "causal", 262144),
         ("bf16", "causal", 151936))


def line(points: list[tuple[int, float]]) -> tuple[float, float]:
    """(fixed ms, ms a row) of the least-squares line through (M, ms)."""
    n = len(points)
    mean_m, mean_ms = sum(m for m, _ in points) / n, sum(t for _, t in points) / n
    slope = sum((m - mean_m) * (t - mean_ms) for m, t in points) / sum((m - mean_m) ** 2 for m, _ in points)
    return mean_ms - slope * mean_m, slope


def main(out: str) -> None:
    write = csv_rows(out, ["dtype", "op", "N", "M", "config", "kernel_ms", "copy_ms", "bytes", "pct_of_copy"])
    for name, op, N in SPECS:
        dtype = DTYPES[name]
        kernel, copy = [], []
        for M in ROWS:
            if M * N * dtype.itemsize * 3 > 6 << 30:
                continue
            x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            fusion = PLAIN if op == "plain" else ops.get_op(op).fusion_for(x)
            nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            y, launch = cluster.launch(x, fusion)
            expected = ops.reference(x, fusion, torch.float32)
            assert (y.float() - expected).abs().max().item() < 0.05, (name, op, N, M)
            del y, expected
            kernel_ms = measure(lambda: cluster.launch(x, fusion), SETTINGS, interpret=False).ms
            copy_ms = measure_copy(dtype, nbytes // 2 // dtype.itemsize, SETTINGS, interpret=False)["ms"]
            config = " ".join(f"{k}={v}" for k, v in launch.config.items())
            pct = 100 * copy_ms / kernel_ms
            write([name, op, N, M, config, kernel_ms, copy_ms, nbytes, round(pct, 2)])
            print(f"{name} {op} {M}x{N}: kernel {kernel_ms * 1e3:8.1f} µs, copy {copy_ms * 1e3:8.1f} µs, "
                  f"{pct:5.1f} % ({config})", flush=True)
            kernel.append((M, kernel_ms))
            copy.append((M, copy_ms))
            del x, fusion
        (k_fixed, k_row), (c_fixed, c_row) = (line([p for p in points if p[0] >= 64]) for points in (kernel, copy))
        print(f"{name} {op} N={N}: kernel {k_fixed * 1e3:.1f} µs + {k_row * 1e3:.3f} µs a row; copy "
              f"{c_fixed * 1e3:.1f} µs + {c_row * 1e3:.3f} µs a row; per row the kernel at {100 * c_row / k_row:.1f} % "
              "of the copy", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
