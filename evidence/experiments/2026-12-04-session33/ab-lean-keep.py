"""cluster's backward as it is against cluster_backward.LEAN_KEEP (a log_softmax's keep-mask's or causal rows' keep
one int32 a lane: the mask's bytes a vector at a time, the diagonal in 32 bits, no bounds; e^y without the denormal
fix-up) and LATE_Y (y read after the exchange, dy alone held across it; softmax's y read before too, and capped at
LATE_Y_REGISTERS), and both, in alternating rounds after a copy of the same bytes (config_timing.in_rounds); each
dx checked against the float64 reference of the op's backward (max error printed) and against as it is bit for
bit, registers as the device counts them beside it. % of a copy of the backward's own bytes (its traffic model: y,
dy and the mask read, dx written).
Prediction (thirty-third session, CPU: compiled for sm_90, tests/test_cluster_backward.py): LEAN_KEEP takes bf16
causal and masked logs down to the plain log's SASS instructions (131072: causal 1576 → 992, mask 1720 → 976; the
log alone 952) and registers (214 → 100 causal 262144, 165 → 105 mask); LATE_Y fp32 262144 154 → 102 registers (two
CTAs an SM), softmax's 156 → 128 under the cap without a spill. Their default grids (causal-log-backward-h200,
scaled-masked-log-backward-h200) ran at 41–85 % of the roofline from bf16 16384, where the scaled and biased logs'
ran at 93–105; every form's log at 86.9–88.6 at fp32 512×262144. So: lean ≥ 92 % of a copy at every bf16 cell, ≥ 10
points above as it is; fp32 ≥ 5 points above where it was under 92; late_y ≥ 92 at fp32 512×262144 (alone for the
scaled log and softmax, with lean for the others; softmax's backward 89–90 % of a copy in every run) and within ±1
elsewhere; every dx bit for bit but where e^y < 2^-126.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session33/ab-lean-keep.py OUT.csv [OP:DTYPE:MxN ...]
OP:DTYPE:MxN (thirty-fourth session): those cells' logs (OP causal, scaled-masked or scaled; DTYPE bf16 or fp32)
in place of CELLS. FORMS=early: LEAN_KEEP with and without MASK_EARLY (the keep-mask applied to dy before the
exchange), each with and without LATE_Y, "lean" the reference of bit for bit.
"""
import os
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster_backward

CELLS = [(op, True, dtype, M, N) for op in ("causal", "scaled-masked") for dtype in (torch.bfloat16, torch.float32)
         for M, N in ((8192, 16384), (4096, 128256), (512, 262144))] + [
    ("scaled", True, torch.float32, 512, 262144), ("scaled", True, torch.bfloat16, 512, 262144),
    ("softmax", False, torch.float32, 512, 262144), ("softmax", False, torch.float32, 1024, 131072)]
if sys.argv[2:]:
    CELLS = [(op, True, {"bf16": torch.bfloat16, "fp32": torch.float32}[dtype], *map(int, shape.split("x")))
             for op, dtype, shape in (cell.split(":") for cell in sys.argv[2:])]
FORMS = {"as is": (False, False, False), "lean": (True, False, False), "late_y": (False, True, False),
         "lean+late_y": (True, True, False)}
if os.environ.get("FORMS") == "early":
    FORMS = {"lean": (True, False, False), "lean+early": (True, False, True), "lean+late_y": (True, True, False),
             "lean+late_y+early": (True, True, True)}
SWITCHES = ("LEAN_KEEP", "LATE_Y", "MASK_EARLY")
DEFAULTS = [getattr(cluster_backward, name) for name in SWITCHES]

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, log, dtype, M, N in CELLS:
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x, log=log)
    y = ops.reference(x, fusion, torch.float32).to(dtype)
    dy = torch.randn_like(y)
    forms = FORMS if log and (fusion.mask is not None or fusion.causal_m is not None) else {
        k: v for k, v in FORMS.items() if k in ("as is", "late_y")}

    def launched(form: str):
        for name, value in zip(SWITCHES, forms[form]):
            setattr(cluster_backward, name, value)
        return cluster_backward.launch(y, dy, fusion)

    expected = ops.backward_reference(y, dy, fusion, torch.float64)
    reference = launched(next(iter(forms)))[0]
    for form in forms:
        dx, launch = launched(form)
        err = (dx.double() - expected).abs().max().item()
        same = "bit for bit" if torch.equal(dx, reference) else "DIFFERS"
        print(op, "log" if log else "", str(dtype), M, N, form, same, f"max err {err:.3g}", "registers",
              launch.n_regs, "spilled", launch.n_spills, flush=True)
    del expected, reference
    calls = {form: (lambda form=form: launched(form)) for form in forms}
    nbytes = cluster_backward.traffic(M, N, dtype, fusion).total_bytes
    label = op + (" log" if log else "")
    in_rounds(calls, 5, dtype, nbytes, write, [label, str(dtype).split(".")[1], M, N, "cluster-backward"],
              marked=next(iter(forms)))
    for name, value in zip(SWITCHES, DEFAULTS):
        setattr(cluster_backward, name, value)
    del x, y, dy
