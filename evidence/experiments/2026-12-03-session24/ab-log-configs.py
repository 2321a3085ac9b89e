"""The cluster kernel's causal log_softmax in configurations other than config_for's (cluster.LOG_AS_FORM on), in
alternating rounds after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit against
config_for's. % of a copy of the op's own bytes (x's kept columns read, y written).
Prediction (twenty-fourth session): fp32 4096×128256 log runs at 141 registers (3 CTAs of 4 warps an SM) and 77 %
of its roofline where the softmax, at ≤ 128, runs at 98: capped at 128 (compiled for sm_90: no spills) ≥ 95.
fp32 2048×151936's log, uncapped at 137 registers (94.7 %): the cap spills 64 bytes, expected slower.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-03-session24/ab-log-configs.py OUT.csv"""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

CELLS = [(torch.float32, 4096, 128256, True, (128, 112)), (torch.float32, 4096, 128256, False, (128,)),
         (torch.float32, 2048, 151936, True, (128,))]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "variant", "form", "round", "ms", "pct_of_copy",
                               "copy_gbps"])
for dtype, M, N, log, caps in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = dataclasses.replace(ops.get_op("causal").fusion_for(x), log=log)
    chosen = cluster.config_for(N, dtype, fusion)
    configs = {f"config_for ({chosen.max_registers})": chosen,
               **{f"cap {cap}": dataclasses.replace(chosen, max_registers=cap) for cap in caps}}
    reference = cluster.launch(x, fusion, chosen)[0]
    for label, config in configs.items():
        same = torch.equal(cluster.launch(x, fusion, config)[0], reference)
        print(str(dtype), M, N, "log" if log else "softmax", label, "bit for bit" if same else "DIFFERENT", flush=True)
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds({label: (lambda c=config: cluster.launch(x, fusion, c)[0]) for label, config in configs.items()}, 5,
              dtype, nbytes, write, [str(dtype).split(".")[1], M, N, log, "cluster"],
              marked=next(iter(configs)))
    del x, reference
