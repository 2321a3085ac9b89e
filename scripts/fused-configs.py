"""Experiment: fused's warps a program on rows it holds whole (N = 4096 … 32768), as % of a copy of the same bytes
measured in the same process; each configuration checked against torch's fp32 softmax. One CSV line per
measurement, flushed, so an interrupted run keeps what it measured. Quack leads fused at bf16 8192×16384 (97.4
against 93.8 % in results/wide-rows-quack-h200), where fused runs 16 warps, 32 elements a thread.

    python3 scripts/fused-configs.py OUT.csv [bf16|fp32] [N ...]
"""

import csv
import sys

import torch

from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import TOLERANCES, fused
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=30)
ELEMS = 2**27
WIDTHS = [4096, 8192, 16384, 24576, 32768]
WARPS = (4, 8, 16, 32)


def main(path: str, dtypes: list[torch.dtype], widths: list[int]) -> None:
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(["dtype", "M", "N", "num_warps", "per_thread", "default", "n_regs", "n_spills", "ms", "ms_p20",
                     "ms_p80", "pct_of_copy", "copy_gbps", "max_err", "ok"])
    for dtype in dtypes:
        for N in widths:
            M = ELEMS // N
            copy = measure_copy(dtype, M * N, SETTINGS, interpret=False)["gbps"]
            x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            ref = torch.softmax(x.float(), -1)
            default = fused.launch_config(M, N)
            for warps in WARPS:
                config = {**default, "num_warps": warps}
                per_thread = config["BLOCK_N"] * config["ROWS"] // (32 * warps)
                try:
                    t = measure(lambda: fused.launch(x, config=config), SETTINGS, interpret=False)
                    y, launch = fused.launch(x, config=config)
                    err = (y.float() - ref).abs().max().item()
                except Exception as e:  # noqa: BLE001 - a config that does not build is a row, not the end
                    print(dtype, N, warps, "error", type(e).__name__, str(e)[:200], flush=True)
                    continue
                ok = err == err and err <= TOLERANCES[dtype][0] + TOLERANCES[dtype][1]
                pct = 100 * 2 * x.numel() * x.element_size() / t.ms / 1e6 / copy
                writer.writerow([str(dtype).split(".")[-1], M, N, warps, per_thread, config == default,
                                 launch.n_regs, launch.n_spills, t.ms, t.ms_p20, t.ms_p80, round(pct, 1), round(copy),
                                 err, ok])
                out.flush()
                print(dtype, M, N, warps, per_thread, launch.n_regs, launch.n_spills, f"{pct:.1f}%", f"err {err:.2g}",
                      "" if ok else "WRONG", "(default)" if config == default else "", flush=True)
            del x, ref


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    dtypes = [named[a] for a in args if a in named] or list(named.values())
    main(sys.argv[1], dtypes, [int(a) for a in args if a not in named] or WIDTHS)
