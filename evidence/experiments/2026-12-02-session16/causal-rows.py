"""Do the narrow causal cells need bigger programs (issue 26)? At M ≫ N, bottom-right aligned, nearly every row of
the default grid's narrow causal cells keeps no column: a program reads nothing and writes ROWS · N zeros. In
causal-h200-d, bf16 N = 32 … 1024 (2048 elements, 4 KB written a program) wrote at about 2.0 TB/s, fp32 N = 1024
(8 KB a program) at 3.9 TB/s and fp32 N = 32 … 512 at 3.0: a rate that follows the programs, not the bytes.
Prediction: programs of 4–8× the rows write at ≥ 3.8 TB/s, ≥ 90 % of the cells' roofline. Also N = 2048, where
auto ran fp32's causal on two_pass at 69 %. fused's launch config with ROWS × 1, 2, 4, 8 and 4 warps (and 8 from
4× the rows), at the grid's causal_m = M and at attention's causal_m = N (an [B·H·S, S] input: every row reads),
each checked against torch's fp32 result; % of the roofline (a copy's GB/s over the bytes the op moves).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session16/causal-rows.py OUT.csv [N ...]"""
import sys
from dataclasses import replace

import torch

from config_timing import ELEMS, copy_gbps, csv_rows, time_checked
from softmax_bench import ops
from softmax_bench.kernels import TOLERANCES, fused, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [32, 128, 1024, 2048]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "causal_m", "rows", "num_warps", "default", "n_regs", "ms",
                               "pct_of_roofline", "written_tbps", "max_err", "ok"])


def configs(default: dict, M: int):
    for times in (1, 2, 4, 8):
        for warps in (4, 8) if times > 2 else (4,):
            config = {**default, "ROWS": default["ROWS"] * times, "num_warps": warps}
            if 4 <= config["BLOCK_N"] * config["ROWS"] // (32 * warps) <= 128 and config["ROWS"] <= M:
                yield config


for dtype in (torch.bfloat16, torch.float32):
    for N in WIDTHS:
        M = ELEMS // N
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        copy = copy_gbps(dtype, 2 * x.nbytes)
        default = fused.launch_config(M, N, dtype)
        for causal_m in (M, N):
            fusion = replace(ops.get_op("causal").fusion_for(x), causal_m=causal_m)
            ref = ops.reference(x, fusion, torch.float32)
            nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            for config in configs(default, M):
                r = time_checked(lambda c, x=x, f=fusion: fused.launch(x, f, config=c), config, ref, TOLERANCES,
                                 dtype, nbytes, copy, (dtype, N, config))
                if r is None:
                    continue
                is_default = config == default
                write([str(dtype).split(".")[1], M, N, causal_m, config["ROWS"], config["num_warps"], is_default,
                       r.launch.n_regs, r.timing.ms, round(r.pct_of_copy, 1), round(x.nbytes / r.timing.ms / 1e9, 2),
                       r.max_err, r.ok])
                print(str(dtype), N, causal_m, config["ROWS"], config["num_warps"], "default" if is_default else "",
                      r.launch.n_regs, f"{r.timing.ms:.4f} ms {r.pct_of_copy:5.1f} %", "ok" if r.ok else "WRONG",
                      flush=True)
            del ref
        del x
