"""The cluster kernel's rows in config_for's configuration and capped where a cap gives an SM one more CTA without
spilling (occupancy-scan.py: compiled for sm_90, `occupancy/compiled-sm90.jsonl`), in alternating rounds after a
copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against config_for's. % of a copy
of the op's own bytes (x's kept columns read, y written).
Prediction (twenty-seventh session, CPU; causal bf16 50257 went 89.6 → 96.1 at 96 registers, 4 → 5 CTAs an SM):
a CTA more an SM is ≥ 1.5 points where the cell is under 95 — softmax bf16 512×262144 (92.6–93.6 in the sweeps;
issue 28's floor 94.3) and 682×196608 (93.6) ≥ 95, causal bf16 512×262144 (89.1) ≥ 92, scaled bf16 262144 ≥ 95;
within 1 where the cell is at 95 or more (softmax bf16 2048×151936, causal bf16 1024×131072). Causal bf16
2048×151936 (90.1) and fp32 512×262144 (90.5) in other shapes with more warps an SM: ≥ 92 if warps an SM are
what they lack.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session27/ab-occupancy.py OUT.csv
"""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic
from softmax_bench.kernels.aligned import window_lanes

# op, dtype, M, N, log, tries: a cap in config_for's CTAs and warps, or (CTAs, warps, cap); the compile for sm_90 on
# CPU (registers: config_for's → the try's, CTAs an SM) in the comments. The H200's ptxas may count otherwise: each
# configuration's registers on the device are printed beside it.
CELLS = [("softmax", torch.bfloat16, 512, 262144, False, (96,)),  # 16 × 4: 128 → 96, 4 → 5
         ("softmax", torch.bfloat16, 682, 196608, False, (80,)),  # 16 × 4: 96 → 80, 5 → 6
         ("causal", torch.bfloat16, 512, 262144, False, (96, (16, 8, None), (16, 8, 64))),  # 16 × 4: 128 → 96, 4 → 5;
         # 16 × 8: 79, 3 CTAs of 8 warps; capped at 64, 4 (MEASURED's 16 × 8 at 80, 92.1 in the nineteenth session,
         # is not taken since causal rows read by vectors take the plain row's configuration)
         ("causal", torch.bfloat16, 512, 262144, True, (96, (16, 8, 64))),
         ("scaled", torch.bfloat16, 512, 262144, False, (96,)),  # 127 → 96, 4 → 5
         ("softmax", torch.bfloat16, 2048, 151936, False, (64,)),  # 8 × 8: 80 → 64, 3 → 4
         ("causal", torch.bfloat16, 2048, 151936, False, ((16, 8, None), (16, 4, 80))),  # 8 × 8 at 80: 24 warps an SM;
         # 16 × 8 at 63: 32; 16 × 4 capped at 80: 24, in 6 CTAs
         ("causal", torch.float32, 512, 262144, False, ((16, 16, 64),)),  # 16 × 8 at 125: 2 CTAs, 16 warps; 16 × 16
         # capped at 64: 2 CTAs, 32 warps (32 bytes spilled)
         ("causal", torch.bfloat16, 1024, 131072, False, (96,))]  # 128 → 96, 4 → 5


def tried(chosen, N: int, dtype: torch.dtype, fusion, how) -> tuple[str, object]:
    """The label and configuration of a try: a cap in chosen's CTAs and warps, or (CTAs, warps, cap)."""
    if isinstance(how, int):
        return f"cap {how}", dataclasses.replace(chosen, max_registers=how)
    ctas, warps, cap = how
    config = cluster.layout(window_lanes(N, dtype), ctas, warps, dtype, cluster.holding(dtype, fusion, N))
    return f"{ctas} x {warps} cap {cap}", dataclasses.replace(config, max_registers=cap, evict=chosen.evict)


write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "log", "variant", "form", "round", "ms", "pct_of_copy",
                               "copy_gbps"])
for op, dtype, M, N, log, tries in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    chosen = cluster.config_for(N, dtype, fusion)
    configs = {f"config_for {chosen.ctas} x {chosen.num_warps} cap {chosen.max_registers}": chosen,
               **dict(tried(chosen, N, dtype, fusion, how) for how in tries)}
    calls = {label: (lambda c=config: cluster.launch(x, fusion, c)[0]) for label, config in configs.items()}
    reference = calls[next(iter(calls))]()
    for label, config in configs.items():
        y, launched = cluster.launch(x, fusion, config)
        same = "bit for bit" if torch.equal(y, reference) else "DIFFERS"
        print(op, str(dtype), M, N, "log" if log else "softmax", label, same, "registers", launched.n_regs,
              "spilled", launched.n_spills, flush=True)
    nbytes = one_pass_traffic(M, N, dtype, fusion, skips_causal=True).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [op, str(dtype).split(".")[1], M, N, log, "cluster"],
              marked=next(iter(calls)))
    del x, reference
