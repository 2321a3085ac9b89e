"""The cluster kernel's rows in config_for's configuration and capped where a cap gives an SM one more CTA without
spilling (occupancy-scan.py: compiled for sm_90, `occupancy/compiled-sm90.jsonl`), in alternating rounds after a
copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against config_for's. % of a copy
of the op's own bytes (x's kept columns read, y written).
Prediction (twenty-seventh session, CPU; causal bf16 50257 went 89.6 → 96.1 at 96 registers, 4 → 5 CTAs an SM):
a CTA more an SM is ≥ 1.5 points where the cell is under 95 — softmax bf16 512×262144 (92.6–93.6 in the sweeps;
issue 28's floor 94.3) and 682×196608 (93.6) ≥ 95, causal bf16 512×262144 (89.1) ≥ 92, scaled bf16 262144 ≥ 95;
within 1 where the cell is at 95 or more (softmax bf16 2048×151936, causal bf16 1024×131072).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session27/ab-occupancy.py OUT.csv
"""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

# op, dtype, M, N, log, caps (the compile's registers: uncapped → capped, CTAs an SM)
CELLS = [("softmax", torch.bfloat16, 512, 262144, False, (96,)),  # 128 → 96, 4 → 5
         ("softmax", torch.bfloat16, 682, 196608, False, (80,)),  # 96 → 80, 5 → 6
         ("causal", torch.bfloat16, 512, 262144, False, (96,)),  # 128 → 96, 4 → 5
         ("causal", torch.bfloat16, 512, 262144, True, (96,)),
         ("scaled", torch.bfloat16, 512, 262144, False, (96,)),  # 127 → 96, 4 → 5
         ("softmax", torch.bfloat16, 2048, 151936, False, (64,)),  # 80 → 64, 3 → 4
         ("causal", torch.bfloat16, 1024, 131072, False, (96,))]  # 128 → 96, 4 → 5

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "log", "variant", "form", "round", "ms", "pct_of_copy",
                               "copy_gbps"])
for op, dtype, M, N, log, caps in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    chosen = cluster.config_for(N, dtype, fusion)
    configs = {f"config_for ({chosen.max_registers})": chosen,
               **{f"cap {cap}": dataclasses.replace(chosen, max_registers=cap) for cap in caps}}
    calls = {label: (lambda c=config: cluster.launch(x, fusion, c)[0]) for label, config in configs.items()}
    reference = calls[next(iter(calls))]()
    for label, call in calls.items():
        same = "bit for bit" if torch.equal(call(), reference) else "DIFFERS"
        print(op, str(dtype), M, N, "log" if log else "softmax", label, same, flush=True)
    nbytes = one_pass_traffic(M, N, dtype, fusion, skips_causal=True).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [op, str(dtype).split(".")[1], M, N, log, "cluster"],
              marked=next(iter(calls)))
    del x, reference
