"""The cluster kernel's causal or biased log_softmax in configurations other than config_for's (cluster.LOG_AS_FORM
on), in alternating rounds after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit
against config_for's. % of a copy of the op's own bytes (x's kept columns read, the bias read, y written).
Prediction (twenty-fourth session): fp32 4096×128256 log runs at 141 registers (3 CTAs of 4 warps an SM) and 77 %
of its roofline where the softmax, at ≤ 128, runs at 98: capped at 128 (compiled for sm_90: no spills) ≥ 95.
fp32 2048×151936's log, uncapped at 137 registers (94.7 %): the cap spills 64 bytes, expected slower.
Outcome (twenty-fourth session, ab-log/): 128256 log uncapped 77.9, cap 128 92.1, cap 112 98.3; 151936 95.2 either way.
`biased` (added after that run, for the next one): biased fp32 4096×128256's log in BIASED's 16 × 16 at 53 registers
runs at 73.8 % where its softmax runs at 97.5; compiled for sm_90 its loads go in two waves, [7, 1] (the softmax's:
[8]); capped at 48 registers, or with cluster.POSITIVE_SCALES off, one wave of 8, no spills. Prediction: either
≥ 95.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-03-session24/ab-log-configs.py OUT.csv [causal|biased]
(the op is not a column of OUT: name OUT after it)."""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

CELLS = {"causal": [(torch.float32, 4096, 128256, True, (128, 112)), (torch.float32, 4096, 128256, False, (128,)),
                    (torch.float32, 2048, 151936, True, (128,))],
         "biased": [(torch.float32, 4096, 128256, True, (48, 56)), (torch.float32, 4096, 128256, False, (48,))]}
op = sys.argv[2] if len(sys.argv) > 2 else "causal"


def without_positive_scales(call):
    """call() with cluster.POSITIVE_SCALES off (read at each launch); on again after."""
    cluster.POSITIVE_SCALES = False
    try:
        return call()
    finally:
        cluster.POSITIVE_SCALES = True


write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "variant", "form", "round", "ms", "pct_of_copy",
                               "copy_gbps"])
for dtype, M, N, log, caps in CELLS[op]:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    chosen = cluster.config_for(N, dtype, fusion)
    configs = {f"config_for ({chosen.max_registers})": chosen,
               **{f"cap {cap}": dataclasses.replace(chosen, max_registers=cap) for cap in caps}}
    calls = {label: (lambda c=config: cluster.launch(x, fusion, c)[0]) for label, config in configs.items()}
    if op == "biased":
        calls["POSITIVE_SCALES off"] = lambda: without_positive_scales(lambda: cluster.launch(x, fusion, chosen)[0])
    reference = calls[next(iter(calls))]()
    for label, call in calls.items():
        out = call()
        gap = torch.where(out == reference, 0.0, (out - reference).abs()).max()  # -inf where both are: no gap
        same = "bit for bit" if torch.equal(out, reference) else f"differs by {gap:.3g}"
        print(op, str(dtype), M, N, "log" if log else "softmax", label, same, flush=True)
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [str(dtype).split(".")[1], M, N, log, "cluster"],
              marked=next(iter(calls)))
    del x, reference
