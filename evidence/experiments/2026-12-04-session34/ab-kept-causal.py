"""Why the causal log's backward ran fp32 512×262144 at 92.4 % of a copy with LEAN_KEEP, and the scaled log's,
which keeps every column, at 87.1 (thirty-fourth session, lean-keep; both one 8-warp CTA an SM, 166 and 154
registers, 848 and 560 SASS instructions a thread): the same y and dy, the log's backward as it runs for a log
with no keep, and as it runs for causal rows with causal_m = 1, whose diagonal is each row's last column (every
column kept, so dx is the same), with LEAN_KEEP and without; LATE_Y off in all (as in the A/B). Alternating rounds
after a copy of the same bytes (config_timing.in_rounds), % of a copy of the plain log backward's bytes; each dx
checked bit for bit against the log's.
Prediction: if the causal path is faster on the same data, it is the compiled code (its load waves [16, 16]
against [26, 6]; ptxas schedules them), not the cell: kept-causal lean ≥ 91, the log ≤ 88.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session34/ab-kept-causal.py OUT.csv [MxN ...]
"""
import dataclasses
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster_backward

SHAPES = [tuple(map(int, a.split("x"))) for a in sys.argv[2:]] or [(512, 262144)]
write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
cluster_backward.LATE_Y = False
for M, N in SHAPES:
    x = torch.randn(M, N, dtype=torch.float32, device="cuda") * 3
    log = ops.get_op("scaled").fusion_for(x, log=True)
    y = ops.reference(x, log, torch.float32)
    dy = torch.randn_like(y)
    kept_causal = dataclasses.replace(log, causal_m=1)  # j ≤ (i % 1) + (N − 1): every column
    forms = {"log": (log, True), "kept-causal lean": (kept_causal, True), "kept-causal": (kept_causal, False)}

    def launched(form: str):
        fusion, lean = forms[form]
        cluster_backward.LEAN_KEEP = lean
        return cluster_backward.launch(y, dy, fusion)

    reference = launched("log")[0]
    for form in forms:
        dx, launch = launched(form)
        print(M, N, form, "bit for bit" if torch.equal(dx, reference) else "DIFFERS", "registers", launch.n_regs,
              flush=True)
    calls = {form: (lambda form=form: launched(form)) for form in forms}
    nbytes = cluster_backward.traffic(M, N, torch.float32, log).total_bytes
    in_rounds(calls, 7, torch.float32, nbytes, write, ["scaled log", "float32", M, N, "cluster-backward"],
              marked="log")
