"""fused's causal backward with its programs run last row first (fused_backward.HEAVIEST_FIRST, where rows'
kept shares differ by more than N / 4) against row order, on the default grid's causal cells that fused's backward
takes (M = 2^27 / N rows as queries, bottom-right aligned; and the grid's 4096×4000), softmax and log_softmax, in alternating rounds after a
copy of the same bytes (config_timing.in_rounds). Each dx is checked against row order's (torch.equal). % of a copy
of the backward's own bytes (backward_traffic: kept y, kept dy for softmax, dy of the rows keeping any for log,
dx whole): the % of its roofline the grids report.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session52/ab-heaviest-first-backward.py OUT.csv [N|MxN ...]
Written in the fifty-second session, with no device lent."""
import sys

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import backward_traffic, fused, fused_backward

CELLS = sys.argv[2:] or ["512", "1024", "4096x4000", "4000", "4096", "8192", "16384"]
FORMS = {"row order": False, "heaviest first": True}
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "log", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for cell in CELLS:
        for log in (False, True):
            if "x" in cell:
                M, N = map(int, cell.split("x"))
                x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
            else:
                N = int(cell)
                M, [x] = input_copies(N, dtype, 1)
            fusion = ops.get_op("causal").fusion_for(x, log=log)
            y = fused.launch(x, fusion)[0]
            dy = torch.randn_like(y)

            def launch(heaviest_first: bool, y=y, dy=dy, fusion=fusion):
                fused_backward.HEAVIEST_FIRST = heaviest_first  # read at each launch
                return fused_backward.launch(y, dy, fusion)[0]

            in_order = launch(False)
            same = torch.equal(launch(True), in_order)
            print(str(dtype), M, N, "log" if log else "softmax", "bit for bit" if same else "DIFFERENT", flush=True)
            nbytes = backward_traffic(M, N, dtype, fusion).total_bytes
            in_rounds({form: (lambda h=first: launch(h)) for form, first in FORMS.items()}, 5, dtype, nbytes,
                      write, [str(dtype).split(".")[1], M, N, int(log)], marked="heaviest first")
            del x, y, dy, in_order
fused_backward.HEAVIEST_FIRST = True
