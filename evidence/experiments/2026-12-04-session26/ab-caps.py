"""The cluster kernel's fused rows in config_for's configuration and under register caps, in alternating rounds
after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against config_for's.
% of a copy of the op's own bytes (x's kept columns read, y written).
Prediction (twenty-sixth session, CPU): causal bf16 8192×50257 (89.8 % of its roofline in causal-h200-l) runs in
the plain row's 4 × 4 at 114 registers, 4 CTAs an SM where the plain row's 96 leave 5; compiled for sm_90, capped at
102 or 96 it spills nothing and issues its 14 loads in one wave as uncapped: ≥ 94 capped. Its log (110) likewise.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session26/ab-caps.py OUT.csv
"""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

CELLS = [("causal", torch.bfloat16, 8192, 50257, False, (102, 96)),
         ("causal", torch.bfloat16, 8192, 50257, True, (102, 96))]

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
