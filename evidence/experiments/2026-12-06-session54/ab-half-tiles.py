"""fused's causal forward with rows computed in the narrowest tile holding what they keep, of one halving (a
half-width tile) or two (a quarter's too) (fused.TILE_HALVINGS) against the whole tile, on the default grid's causal
cells fused runs one row a program (M = 2^27 / N rows as queries, bottom-right aligned; and the grid's 4096×4000),
softmax and log_softmax, in alternating rounds after a copy of the same bytes (config_timing.in_rounds). Each y is
checked against the whole tile's (torch.equal). % of a copy of the op's own bytes (one_pass_traffic: kept x read, y
written whole), timed in-process beside each other: compare forms within a cell, not with a sweep's % of the
roofline (on the H200 bf16 4096×4000's whole tile read 98.9 here and 81.9 in a sweep).
    PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session54/ab-half-tiles.py OUT.csv [N|MxN ...]
Written in the fifty-fourth session; it ran there on an H200 with TILE_HALVINGS an int (the same halvings whatever
the dtype), as the launch read it then."""
import sys

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(), flush=True)
CELLS = sys.argv[2:] or ["4096x4000", "4000", "8192", "16384", "2048"]
FORMS = {"whole tile": 0, "half tiles": 1, "quarter tiles": 2}
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

            def launch(halvings: int, x=x, fusion=fusion):
                fused.TILE_HALVINGS = {x.element_size(): halvings}  # read at each launch
                return fused.launch(x, fusion)[0]

            whole = launch(0)
            same = all(torch.equal(launch(h), whole) for h in (1, 2))
            print(str(dtype), M, N, "log" if log else "softmax", "bit for bit" if same else "DIFFERENT", flush=True)
            nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            in_rounds({form: (lambda h=half: launch(h)) for form, half in FORMS.items()}, 5, dtype, nbytes,
                      write, [str(dtype).split(".")[1], M, N, int(log)], marked="half tiles")
            del x, whole
fused.TILE_HALVINGS = {2: 1}  # as the fifty-fourth session set it after this run
