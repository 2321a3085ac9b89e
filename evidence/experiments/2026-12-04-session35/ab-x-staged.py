"""cluster's forward as it is against cluster.X_STAGED_AT (a 16-bit row staged in shared memory by cp.async and read
from there by the max, the sum and the store: nothing held across the exchange), uncapped and capped (64 registers;
48 at scaled bf16 131072), in alternating rounds after a copy of the same bytes (config_timing.in_rounds); each y
checked against the float64 reference (max error printed) and against as it is bit for bit, registers as the device
counts them. % of a copy of the op's own bytes (its traffic model: x read where read, y written).
Prediction (thirty-fifth session, CPU: compiled for sm_90, tests/test_cluster.py): causal bf16 151936 in 8 × 8
takes 80 registers held (three CTAs an SM) and spills 64 bytes capped at 64; staged it takes 80 uncapped and spills
nothing at 64 (four CTAs an SM; 42 KB of shared memory a CTA, five). So: staged capped at 64 ≥ 92 % of a copy at
causal bf16 2048×151936, softmax (90.5 in causal-h200-ftz) and log_softmax; staged uncapped within ±1 of as is
where it compiles to the same registers (151936, 262144); at the cells already ≥ 92 (causal bf16 512×262144, 64:
96 bytes spilled; scaled bf16 1024×131072, 48: 7 → 10 CTAs an SM, no spill; plain bf16 8192×50257, 64: 96 → 64,
no spill) no loss beyond 1; every y bit for bit (x-staged-compiled.txt).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session35/ab-x-staged.py OUT.csv [OP:LOG:DTYPE:MxN:CAP ...]
OP:LOG:DTYPE:MxN:CAP: those cells in place of CELLS (LOG "log" or "softmax", DTYPE bf16, fp16 or fp32), staged
uncapped and capped at CAP registers (0: uncapped only).
"""
import sys

import torch

from config_timing import checked_forms, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
CELLS = [("causal", False, torch.bfloat16, 2048, 151936, 64), ("causal", True, torch.bfloat16, 2048, 151936, 64),
         ("causal", False, torch.bfloat16, 512, 262144, 64), ("scaled", False, torch.bfloat16, 1024, 131072, 48),
         ("softmax", False, torch.bfloat16, 8192, 50257, 64)]
if sys.argv[2:]:
    CELLS = [(op, log == "log", DTYPES[dtype], *map(int, shape.split("x")), int(cap))
             for op, log, dtype, shape, cap in (cell.split(":") for cell in sys.argv[2:])]

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, log, dtype, M, N, cap in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    form = cluster.form_of(fusion)
    forms = {"as is": {}, "staged": {(form, dtype, N): None}}
    if cap:
        forms[f"staged, {cap} registers"] = {(form, dtype, N): cap}

    def launched(name: str):
        cluster.X_STAGED_AT = forms[name]
        return cluster.launch(x, fusion)

    expected = ops.reference(x, fusion, torch.float64)
    calls = checked_forms(launched, forms, expected, [op, "log" if log else "", str(dtype), M, N])
    del expected
    nbytes = cluster.VARIANT.traffic(M, N, dtype, fusion).total_bytes
    label = op + (" log" if log else "")
    in_rounds(calls, 5, dtype, nbytes, write, [label, str(dtype).split(".")[1], M, N, "cluster"], marked="as is")
    cluster.X_STAGED_AT = {}
    del x
