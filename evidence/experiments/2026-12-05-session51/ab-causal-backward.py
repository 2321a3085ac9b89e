"""fused's causal backward reading only what a causal row keeps (fused_backward.CAUSAL_READS_KEPT: y up to the
diagonal, dy too for softmax) and skipping programs of rows that keep nothing (SKIP_MASKED_PROGRAMS), against whole
rows, on the default grid's causal cells that fused's backward takes (M = 2^27 / N rows as queries, bottom-right
aligned), softmax and log_softmax, in alternating rounds after a copy of the same bytes (config_timing.in_rounds).
Each dx is checked against whole rows' (torch.equal). % of a copy of whole rows' bytes (3·M·N·elem) for every form,
so that the figures compare times: above 100 where fewer bytes move.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session51/ab-causal-backward.py OUT.csv [N ...]
Written in the fifty-first session, with no device lent."""
import sys

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import backward_traffic, fused, fused_backward

WIDTHS = [int(a) for a in sys.argv[2:]] or [512, 1024, 4000, 4096, 8192, 16384]
FORMS = {"whole rows": (False, False), "kept reads": (True, False), "kept + skip": (True, True)}
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for N in WIDTHS:
        for log in (False, True):
            M, [x] = input_copies(N, dtype, 1)
            fusion = ops.get_op("causal").fusion_for(x, log=log)
            y = fused.launch(x, fusion)[0]
            dy = torch.randn_like(y)

            def launch(kept: bool, skip: bool, y=y, dy=dy, fusion=fusion):
                fused_backward.CAUSAL_READS_KEPT, fused_backward.SKIP_MASKED_PROGRAMS = kept, skip  # read a launch
                return fused_backward.launch(y, dy, fusion)[0]

            whole = launch(False, False)
            same = all(torch.equal(launch(*switches), whole) for switches in FORMS.values())
            print(str(dtype), M, N, "log" if log else "softmax", "bit for bit" if same else "DIFFERENT", flush=True)
            nbytes = backward_traffic(M, N, dtype, fusion, skips_causal=False).total_bytes
            in_rounds({form: (lambda s=switches: launch(*s)) for form, switches in FORMS.items()}, 5, dtype, nbytes,
                      write, [str(dtype).split(".")[1], M, N, int(log)], marked="kept + skip")
            del x, y, dy, whole
fused_backward.CAUSAL_READS_KEPT = fused_backward.SKIP_MASKED_PROGRAMS = True
