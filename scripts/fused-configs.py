"""Experiment: fused's warps a program on rows it holds whole (N = 4096 … 32768; its backward's, N ≤ 16384), as % of
a copy of the same bytes measured in the same process; each configuration checked against torch's fp32 softmax
(or its backward). One CSV line per measurement, flushed, so an interrupted run keeps what it measured. Quack
leads fused at bf16 8192×16384 (97.4 against 93.8 % in results/wide-rows-quack-h200), where fused runs 16 warps,
32 elements a thread; torch.compile leads fused's backward there (103.7 against 98.6 %, results/backward-h200).
With `backward`, also twice the rows a program, and the cluster backward's default configuration is timed beside
fused's where it runs (printed only).

    python3 scripts/fused-configs.py OUT.csv [bf16|fp32] [backward] [N|MxN ...]

N alone takes M = 2^27 / N rows; MxN (e.g. 4096x4000, the wide-rows config's first cell) those M rows.
"""

import csv
import itertools
import sys
from functools import partial

import torch

from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import GRAD_TOLERANCES, TOLERANCES, cluster_backward, elem_size, fused, fused_backward
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=30)
ELEMS = 2**27
WIDTHS = [4096, 8192, 16384, 24576, 32768]
WARPS = (4, 8, 16, 32)


def case(M: int, N: int, dtype: torch.dtype, backward: bool):
    """(launch(config), its fp32 reference, tolerances, bytes it moves) for one M×N cell."""
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    if not backward:
        return (lambda config: fused.launch(x, config=config)), torch.softmax(x.float(), -1), TOLERANCES, 2 * x.nbytes
    y, dy = torch.softmax(x, -1), torch.randn_like(x)
    y32, dy32 = y.float(), dy.float()
    ref = y32 * (dy32 - (y32 * dy32).sum(-1, keepdim=True))
    return partial(backward_launch, y=y, dy=dy), ref, GRAD_TOLERANCES, 3 * x.nbytes


def backward_launch(config, y, dy):
    return fused_backward.launch(y, dy, config=config)


def main(path: str, dtypes: list[torch.dtype], shapes: list[tuple[int, int]], backward: bool) -> None:
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(["pass", "dtype", "M", "N", "rows", "num_warps", "per_thread", "default", "n_regs", "n_spills",
                     "ms", "ms_p20", "ms_p80", "pct_of_copy", "copy_gbps", "max_err", "ok"])
    for dtype in dtypes:
        for M, N in shapes:
            run, ref, tolerances, nbytes = case(M, N, dtype, backward)
            copy = measure_copy(dtype, nbytes // 2 // elem_size(dtype), SETTINGS, interpret=False)["gbps"]
            default = fused.launch_config(M, N) if backward else fused.launch_config(M, N, dtype)
            # the backward also with twice the rows a program (narrow rows: more bytes in flight a thread)
            tiles = [default] + ([{**default, "ROWS": 2 * default["ROWS"]}] if backward else [])
            for tile, warps in itertools.product(tiles, WARPS):
                config = {**tile, "num_warps": warps}
                per_thread = config["BLOCK_N"] * config["ROWS"] // (32 * warps)
                try:
                    t = measure(lambda: run(config), SETTINGS, interpret=False)
                    out_, launch = run(config)
                    err = (out_.float() - ref).abs().max().item()
                except Exception as e:  # noqa: BLE001 - a config that does not build is a row, not the end
                    print(dtype, N, warps, "error", type(e).__name__, str(e)[:200], flush=True)
                    continue
                ok = err == err and err <= tolerances[dtype][0] + tolerances[dtype][1] * ref.abs().max().item()
                pct = 100 * nbytes / t.ms / 1e6 / copy
                writer.writerow(["backward" if backward else "forward", str(dtype).split(".")[-1], M, N,
                                 config["ROWS"], warps, per_thread, config == default, launch.n_regs,
                                 launch.n_spills, t.ms, t.ms_p20, t.ms_p80, round(pct, 1), round(copy), err, ok])
                out.flush()
                print(dtype, M, N, config["ROWS"], warps, per_thread, launch.n_regs, launch.n_spills, f"{pct:.1f}%",
                      f"err {err:.2g}", "" if ok else "WRONG", "(default)" if config == default else "", flush=True)
            if backward and cluster_backward.unsupported(N, dtype) is None:  # beside it: the cluster's backward
                y, dy = run.keywords["y"], run.keywords["dy"]
                t = measure(lambda: cluster_backward.launch(y, dy), SETTINGS, interpret=False)
                out_, launch = cluster_backward.launch(y, dy)
                err = (out_.float() - ref).abs().max().item()
                config = cluster_backward.config_for(N, dtype)
                print(dtype, M, N, f"cluster backward {config.ctas}x{config.num_warps}", launch.n_regs,
                      launch.n_spills, f"{100 * nbytes / t.ms / 1e6 / copy:.1f}%", f"err {err:.2g}", flush=True)
            del run, ref


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    backward = "backward" in args
    dtypes = [named[a] for a in args if a in named] or list(named.values())
    shapes = [tuple(map(int, a.split("x"))) if "x" in a else (ELEMS // int(a), int(a))
              for a in args if a.replace("x", "").isdigit()]
    main(sys.argv[1], dtypes, shapes or [(ELEMS // n, n) for n in WIDTHS if not backward or n <= fused_backward.MAX_N],
         backward)
