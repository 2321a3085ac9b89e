"""Experiment: split's (chunk, num_warps, programs per SM) on the wide and vocabulary shapes, and fused's
num_warps on the mid shapes, as % of a copy measured in the same process. One CSV line per measurement,
flushed, so an interrupted run keeps what it measured.

    PYTHONPATH=. python3 scripts/split-configs.py OUT.csv [--quick] [--split-only]
"""

import csv
import sys

import torch
import triton

from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import fused, split
from softmax_bench.kernels.masking import fusion_args
from softmax_bench.kernels import PLAIN
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=40)
ELEMS = 2**27
SPLIT_SHAPES = [(ELEMS // n, n) for n in (16384, 65536, 131072, 262144)] + [(8192, 50257)]
FUSED_SHAPES = [(4096, 4000), (32768, 4096), (8192, 16384), (4096, 32768)]


def main(path: str, quick: bool, split_only: bool) -> None:
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(["kernel", "dtype", "M", "N", "chunk", "num_warps", "per_sm", "K", "groups", "n_regs",
                     "n_spills", "ms", "ms_p20", "ms_p80", "gbps", "pct_of_copy", "max_err"])
    for dtype in (torch.bfloat16, torch.float32):
        copy = measure_copy(dtype, ELEMS, SETTINGS, interpret=False)["gbps"]
        print(dtype, "copy", copy, flush=True)

        def record(kernel, M, N, cfg, fn):
            x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            y, launch = fn(x)
            ref = torch.softmax(x.double(), -1)
            err = (y.double() - ref).abs().max().item()
            t = measure(lambda: fn(x), SETTINGS, interpret=False)
            gbps = 2 * x.numel() * x.element_size() / t.ms / 1e6
            writer.writerow([kernel, str(dtype).split(".")[-1], M, N, *cfg, launch.config.get("K", ""),
                             launch.config.get("groups", ""), launch.n_regs, launch.n_spills,
                             t.ms, t.ms_p20, t.ms_p80, round(gbps), round(100 * gbps / copy, 1), err])
            out.flush()
            print(kernel, dtype, M, N, cfg, launch.config, launch.n_regs, launch.n_spills, f"{100 * gbps / copy:.1f}%",
                  f"err {err:.2g}", flush=True)
            del x, y

        for M, N in [] if split_only else FUSED_SHAPES:
            for num_warps in (4, 8, 16, 32):
                cfg = fused.launch_config(M, N)
                cfg["num_warps"] = num_warps

                def run_fused(x, cfg=cfg):
                    y = torch.empty_like(x)
                    compiled = fused.fused_rows_kernel[(triton.cdiv(M, cfg["ROWS"]),)](
                        x, y, M, N, x.stride(0), y.stride(0), **fusion_args(PLAIN, x), **cfg)
                    return y, fused.Launch(cfg, [compiled])
                record("fused", M, N, (cfg["BLOCK_N"], num_warps, ""), run_fused)
        configs = [(c, w, p, rr) for rr in (False, True) for c in (2048, 4096, 8192) for w in (4, 8, 16)
                   for p in (1, 2, 4, 8, 16) if 8 <= c // (32 * w) <= 64]
        if quick:
            configs = [(*split.CONFIGS[dtype], False)]
        for M, N in SPLIT_SHAPES:
            seen = set()
            for chunk, num_warps, per_sm, reread in configs:
                config = split.SplitConfig(chunk, num_warps, per_sm, reread)
                K = split.split_count(N, dtype, chunk)
                if K > 132 * per_sm:
                    continue
                try:
                    x = torch.empty(M, N, dtype=dtype, device="cuda")
                    groups = split.launch(x, config=config)[1].config["groups"]
                    del x
                    if (chunk, num_warps, reread, groups) in seen:
                        continue  # per_sm above what the kernel's occupancy allows: the same grid again
                    seen.add((chunk, num_warps, reread, groups))
                    record("split-reread" if reread else "split", M, N, (chunk, num_warps, per_sm),
                           lambda x: split.launch(x, config=config))
                except ValueError as e:
                    print("skip", N, config, e, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], "--quick" in sys.argv, "--split-only" in sys.argv)
