"""fused with tl.exp's exponentials against masking.exp2_ftz's (fused.EXP_FTZ: no denormal fix-up), in alternating
rounds after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against tl.exp's,
registers as the device counts them printed beside it. % of a copy of the op's own bytes (a causal row's kept
columns read, y written).
Prediction (thirty-second session, CPU: compiled for sm_90, test_fusion): bf16 causal 4000 in 4 warps capped at 48
takes 696 → 592 SASS instructions a thread, the plain bf16 4096 tile 544 → 448. causal-floor put fused's causal
bf16 4096×4000 at 17.70 µs against 15.25 for a kernel that moves its bytes and computes nothing, and issuing fused's
instructions takes some 10.9 µs of it. So: causal bf16 4096×4000 and 16384×8192 ≥ 2 points of a copy faster; the
memory-bound cells (fp32, plain rows) within ±0.5; every output bit for bit.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session32/ab-exp-ftz.py OUT.csv
"""
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

CELLS = [("causal", torch.bfloat16, 4096, 4000), ("causal", torch.bfloat16, 16384, 8192),
         ("causal", torch.float32, 4096, 4000), ("softmax", torch.bfloat16, 4096, 4000),
         ("softmax", torch.bfloat16, 32768, 4096), ("scaled", torch.float32, 16384, 8192),
         ("scaled-masked", torch.bfloat16, 16384, 8192)]

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, dtype, M, N in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x)

    def launched(ftz: bool):
        fused.EXP_FTZ = ftz
        return fused.launch(x, fusion)

    reference = launched(False)[0]
    for ftz in (False, True):
        y, launch = launched(ftz)
        same = "bit for bit" if torch.equal(y, reference) else "DIFFERS"
        print(op, str(dtype), M, N, "exp2_ftz" if ftz else "tl.exp", same, "registers", launch.n_regs, "spilled",
              launch.n_spills, flush=True)
    calls = {"tl.exp": lambda: launched(False), "exp2_ftz": lambda: launched(True)}
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [op, str(dtype).split(".")[1], M, N, "fused"], marked="tl.exp")
    fused.EXP_FTZ = False
    del x, reference
