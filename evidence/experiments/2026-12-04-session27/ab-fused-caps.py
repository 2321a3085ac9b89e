"""fused's causal rows in launch_config's tile and capped at 48 registers (ptxas's maxnreg), in alternating rounds
after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against the uncapped
one's; each configuration's registers and spills as the device counts them printed beside it. % of a copy of the
op's own bytes (a causal row's kept columns read, y written).
Prediction (twenty-seventh session, CPU: compiled for sm_90, tests.compile_sm90.compile_fused_case): causal bf16
16384×8192 takes 57 registers in 8 warps, 4 programs an SM, where the plain row's 48 leave 5; capped at 48 no spill
(40: 72 bytes). Causal bf16 4096×4000: 53 in 4 warps, 9 an SM; capped at 48, 10. As causal bf16 50257 in cluster
gained 6.5 points from a fifth CTA an SM: 8192 89.0 → ≥ 92, 4000 75.1 → ≥ 77 (its roofline question aside), their
log_softmax alike (88.7, 77.3).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session27/ab-fused-caps.py OUT.csv
"""
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

CELLS = [(torch.bfloat16, 16384, 8192, log, 48) for log in (False, True)] + \
        [(torch.bfloat16, 4096, 4000, log, 48) for log in (False, True)]

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "log", "variant", "form", "round", "ms", "pct_of_copy",
                               "copy_gbps"])
for dtype, M, N, log, cap in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op("causal").fusion_for(x, log=log)
    chosen = fused.launch_config(M, N, dtype)
    configs = {f"launch_config {chosen}": chosen, f"maxnreg {cap}": {**chosen, "maxnreg": cap}}
    calls = {label: (lambda c=config: fused.launch(x, fusion, c)[0]) for label, config in configs.items()}
    reference = calls[next(iter(calls))]()
    for label, config in configs.items():
        y, launched = fused.launch(x, fusion, config)
        same = "bit for bit" if torch.equal(y, reference) else "DIFFERS"
        print("causal", str(dtype), M, N, "log" if log else "softmax", label, same, "registers", launched.n_regs,
              "spilled", launched.n_spills, flush=True)
    nbytes = one_pass_traffic(M, N, dtype, fusion, skips_causal=True).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, ["causal", str(dtype).split(".")[1], M, N, log, "fused"],
              marked=next(iter(calls)))
    del x, reference
