"""Experiment: fused's warps a program on rows it holds whole (N = 4096 … 32768; its backward's, N ≤ 16384), as % of
a copy of the same bytes measured in the same process; each configuration checked against torch's fp32 softmax
(or its backward). One CSV line per measurement, flushed, so an interrupted run keeps what it measured. Quack
leads fused at bf16 8192×16384 (97.4 against 93.8 % in evidence/runs/wide-rows-quack-h200), where fused runs 16 warps,
32 elements a thread; torch.compile leads fused's backward there (103.7 against 98.6 %, evidence/runs/backward-h200).
With `backward`, also twice the rows a program, and the cluster backward's default configuration is timed beside
fused's where it runs (printed only).

    [WARPS=2,4,8] python3 scripts/fused-configs.py OUT.csv [bf16|fp32]
        [backward|scaled|scaled-masked|causal|biased|key-padded] [log] [rows/64|...] [N|MxN ...]

N alone takes M = 2^27 / N rows; MxN (e.g. 4096x4000, the wide-rows config's first cell) those M rows. A sweep's
fused op (scaled-masked, causal, biased) is timed as % of a copy of the bytes the op must move (x, the mask or
bias, y; a causal row's kept columns), also with twice the rows a program. Every configuration is then timed again
capped at the registers that give an SM one more program of it (config_timing.occupancy_cap). log: the op's
log_softmax. A mask shape (softmax_bench.ops.MASK_SHAPES, e.g. rows/64) lays a shaped op's mask or bias out so (a
sweep's --mask-shape; key-padded's is its own).
"""

import itertools
import os
import sys
from functools import partial

import torch

from config_timing import ELEMS, FUSED_OPS, copy_gbps, csv_rows, occupancy_cap, pass_inputs, time_checked

from softmax_bench import ops
from softmax_bench.kernels import PLAIN, TOLERANCES, cluster_backward, fused, fused_backward, one_pass_traffic
WIDTHS = [4096, 8192, 16384, 24576, 32768]
WARPS = tuple(int(w) for w in os.environ.get("WARPS", "4,8,16,32").split(","))  # warps a program tried


def case(M: int, N: int, dtype: torch.dtype, backward: bool, op: str | None = None, log: bool = False,
         mask_shape: str = "full"):
    """(launch(config), its fp32 reference, tolerances, bytes it moves) for one M×N cell (of the sweep's `op`)."""
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    if op is not None:
        fusion = ops.get_op(op).fusion_for(x, mask_shape, log)
        return (lambda config: fused.launch(x, fusion, config=config)), ops.reference(x, fusion, torch.float32), \
            TOLERANCES, one_pass_traffic(M, N, dtype, fusion).total_bytes
    [inputs], ref, tolerances, nbytes = pass_inputs([x], "backward" if backward else "forward")
    if not backward:
        return (lambda config: fused.launch(inputs, config=config)), ref, tolerances, nbytes
    y, dy = inputs
    return partial(backward_launch, y=y, dy=dy), ref, tolerances, nbytes


def backward_launch(config, y, dy):
    return fused_backward.launch(y, dy, config=config)


def main(path: str, dtypes: list[torch.dtype], shapes: list[tuple[int, int]], backward: bool,
         op: str | None = None, log: bool = False, mask_shape: str = "full") -> None:
    write_row = csv_rows(path, ["pass", "dtype", "M", "N", "rows", "num_warps", "per_thread", "max_registers",
                                "default", "n_regs", "n_spills", "ms", "ms_p20", "ms_p80", "pct_of_copy", "copy_gbps",
                                "max_err", "ok"])
    for dtype in dtypes:
        for M, N in shapes:
            run, ref, tolerances, nbytes = case(M, N, dtype, backward, op, log, mask_shape)
            label = "backward" if backward else (op or "forward") + ("-log" if log else "")
            copy = copy_gbps(dtype, nbytes)
            if backward:
                default = fused_backward.launch_config(M, N, dtype)
            else:  # loading as the launch does (kernels.FORWARD_EVICT: evict_last, but narrow causal rows)
                fusion = ops.get_op(op).fusion_for(torch.empty(M, N, device="meta"), mask_shape) if op else PLAIN
                evict = fused.forward_evict(N, fusion)
                default = {**fused.launch_config(M, N, dtype, fusion), **({"EVICT": evict} if evict else {})}
            # the backward and the fused ops also with twice the rows a program (more bytes in flight a thread)
            tiles = [default] + ([{**default, "ROWS": 2 * default["ROWS"]}] if backward or op else [])
            tried = [{**tile, "num_warps": warps} for tile, warps in itertools.product(tiles, WARPS)]
            for config in tried:  # grows: each uncapped configuration then capped at a program more an SM
                warps = config["num_warps"]
                per_thread = config["BLOCK_N"] * config["ROWS"] // (32 * warps)
                r = time_checked(run, config, ref, tolerances, dtype, nbytes, copy, (dtype, N, warps))
                if r is None:
                    continue
                cap = occupancy_cap(r.launch.n_regs, warps) if "maxnreg" not in config else None
                if cap is not None:
                    tried.append({**config, "maxnreg": cap})
                t = r.timing
                write_row([label, str(dtype).split(".")[-1], M, N, config["ROWS"],
                           warps, per_thread, config.get("maxnreg"), config == default, r.launch.n_regs,
                           r.launch.n_spills, t.ms, t.ms_p20, t.ms_p80, round(r.pct_of_copy, 1), round(copy),
                           r.max_err, r.ok])
                print(dtype, M, N, config["ROWS"], warps, per_thread, config.get("maxnreg"), r.launch.n_regs,
                      r.launch.n_spills, f"{r.pct_of_copy:.1f}%", f"err {r.max_err:.2g}", "" if r.ok else "WRONG",
                      "(default)" if config == default else "", flush=True)
            if backward and cluster_backward.unsupported(N, dtype) is None:  # beside it: the cluster's backward
                y, dy = run.keywords["y"], run.keywords["dy"]
                config = cluster_backward.config_for(N, dtype)
                r = time_checked(lambda c: cluster_backward.launch(y, dy, config=c), config, ref, tolerances, dtype,
                                 nbytes, copy, (dtype, N, "cluster backward"))
                if r is not None:
                    print(dtype, M, N, f"cluster backward {config.ctas}x{config.num_warps}", r.launch.n_regs,
                          r.launch.n_spills, f"{r.pct_of_copy:.1f}%", f"err {r.max_err:.2g}", "" if r.ok else "WRONG",
                          flush=True)
            del run, ref


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    backward = "backward" in args
    op = next((a for a in args if a in FUSED_OPS), None)
    dtypes = [named[a] for a in args if a in named] or list(named.values())
    shapes = [tuple(map(int, a.split("x"))) if "x" in a else (ELEMS // int(a), int(a))
              for a in args if a.replace("x", "").isdigit()]
    main(sys.argv[1], dtypes, shapes or [(ELEMS // n, n) for n in WIDTHS if not backward or n <= fused_backward.MAX_N],
         backward, op, "log" in args and op is not None, next((a for a in args if "/" in a), "full"))
