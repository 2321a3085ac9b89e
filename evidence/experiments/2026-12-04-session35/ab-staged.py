"""cluster's backward as it is against cluster_backward.STAGED_AT (softmax's dy, log_softmax's y, copied into shared
memory by cp.async and read from there, so that a thread holds one row across the exchange), in alternating rounds
after a copy of the same bytes (config_timing.in_rounds); each dx checked against the float64 reference (max error
printed) and against as it is bit for bit (the arithmetic is the same), registers as the device counts them. % of
a copy of the backward's own bytes (its traffic model: y, dy and the mask read, dx written).
Prediction (thirty-fifth session, CPU: compiled for sm_90, tests/test_cluster_backward.py): fp32 262144 softmax
156 → 119 registers (one CTA of 8 warps an SM → two; 65 KB of shared memory a CTA), the masked log at fp32 50257
94 → 64 (two → four), 151936 120 → 78, bf16 262144 softmax 125 → 80, fp32 131072 softmax (16 × 4) 155 → 96. So:
staged ≥ 92 % of a copy at fp32 512×262144 (softmax and scaled-masked 88–90, the scaled log 87–89 as is) and at
the masked log's fp32 8192×50257 (80.7) and 2048×151936 (86.5); within ±1 where as is is ≥ 98 (bf16 512×262144
softmax, fp32 1024×131072 softmax); every dx bit for bit. The masked logs also run with MASK_EARLY (session 34's
switch, off; compiled with STAGED beside it: fp32 50257 64 registers, 262144 119, bf16 131072 64, no spill), alone
and staged (its prediction: session 34's next.sh, mask-early); bit for bit against as is but where Σ dy is not
finite.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session35/ab-staged.py OUT.csv [OP:LOG:DTYPE:MxN ...]
OP:LOG:DTYPE:MxN: those cells in place of CELLS (LOG "log" or "softmax", DTYPE bf16 or fp32).
"""
import sys

import torch

from config_timing import checked_forms, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster_backward

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}
CELLS = [("scaled", False, torch.float32, 512, 262144), ("scaled-masked", False, torch.float32, 512, 262144),
         ("scaled", True, torch.float32, 512, 262144), ("scaled-masked", True, torch.float32, 512, 262144),
         ("scaled-masked", True, torch.float32, 8192, 50257), ("scaled-masked", True, torch.float32, 2048, 151936),
         ("scaled-masked", True, torch.bfloat16, 1024, 131072), ("scaled", False, torch.bfloat16, 512, 262144),
         ("softmax", False, torch.float32, 1024, 131072)]
if sys.argv[2:]:
    CELLS = [(op, log == "log", DTYPES[dtype], *map(int, shape.split("x")))
             for op, log, dtype, shape in (cell.split(":") for cell in sys.argv[2:])]

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, log, dtype, M, N in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    y = ops.reference(x, fusion, torch.float32).to(dtype)
    dy = torch.randn_like(y)
    staged = frozenset({(dtype, N)})
    forms = {"as is": (frozenset(), False), "staged": (staged, False)}
    if log and fusion.mask is not None:  # with MASK_EARLY (session 34's, off), alone and staged
        forms |= {"early": (frozenset(), True), "staged+early": (staged, True)}

    def launched(form: str):
        cluster_backward.STAGED_AT, cluster_backward.MASK_EARLY = forms[form]
        return cluster_backward.launch(y, dy, fusion)

    expected = ops.backward_reference(y, dy, fusion, torch.float64)
    calls = checked_forms(launched, forms, expected, [op, "log" if log else "", str(dtype), M, N])
    del expected
    nbytes = cluster_backward.traffic(M, N, dtype, fusion).total_bytes
    label = op + (" log" if log else "")
    in_rounds(calls, 5, dtype, nbytes, write, [label, str(dtype).split(".")[1], M, N, "cluster-backward"],
              marked="as is")
    cluster_backward.STAGED_AT, cluster_backward.MASK_EARLY = frozenset(), False
    del x, y, dy
