"""fused.CAUSAL_BITS (-inf past a causal row's diagonal set as bits, no compare and select an element: a tile's loads
in flight at once, compiled for sm_90) against the select, on the default grid's causal cells that fused runs, in
alternating rounds after a copy of the same bytes (config_timing.in_rounds), each output checked bit for bit
against the other. % of a copy of the op's own bytes (x's kept columns read, y written).
Prediction (twenty-second session): 16384×8192 from 83 % (bf16) and 94 % (fp32) of its roofline to ≥ 92 and ≥ 98,
4096×4000 up, no cell slower.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-03-session22/ab-causal-bits.py OUT.csv"""
import sys

import torch

from config_timing import csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

CELLS = [(2**22, 32), (2**20, 128), (2**18, 512), (2**17, 1024), (2**16, 2048), (4096, 4000), (32768, 4096),
         (16384, 8192)]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for M, N in CELLS:
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        fusion = ops.get_op("causal").fusion_for(x)

        def launch(bits: bool, x=x, fusion=fusion):
            fused.CAUSAL_BITS = bits  # read at each launch
            return fused.launch(x, fusion)[0]

        same = torch.equal(launch(True), launch(False))
        print(str(dtype), M, N, "bit for bit" if same else "DIFFERENT", flush=True)
        nbytes = one_pass_traffic(M, N, dtype, fusion, skips_causal=True).total_bytes
        in_rounds({"select": lambda: launch(False), "bits": lambda: launch(True)}, 5, dtype, nbytes, write,
                  [str(dtype).split(".")[1], M, N, "fused"], marked="select")
        del x
fused.CAUSAL_BITS = False
