"""fused.SKIP_MASKED_PROGRAMS (a program whose causal rows all keep no column writes them and runs nothing else)
against the whole tile, on the default grid's causal cells that fused takes (M = 2^27 / N rows as queries,
bottom-right aligned: all but the last N rows keep nothing), in alternating rounds after a copy of the same bytes
(config_timing.in_rounds), each output checked bit for bit against the other. % of a copy of the op's own bytes.
Prediction (sixteenth session, from the SASS: a skipped program issues ~80 instructions a thread where the tile
issues 528 in bf16 and 680 in fp32): bf16 N ≤ 1024 from 43–47 % to ≥ 85 %, fp32 N ≤ 512 from 69–71 % to ≥ 90 %.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session16/ab-skip-masked.py OUT.csv [N ...]
Written in the sixteenth session, when no device time was left to run it."""
import sys

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [32, 128, 512, 1024, 2048, 4096, 8192, 16384]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for N in WIDTHS:
        M, [x] = input_copies(N, dtype, 1)
        fusion = ops.get_op("causal").fusion_for(x)

        def launch(skip: bool, x=x, fusion=fusion):
            fused.SKIP_MASKED_PROGRAMS = skip  # read by fused.launch at each launch
            return fused.launch(x, fusion)[0]

        skipped, whole = launch(True), launch(False)
        print(str(dtype), M, N, "bit for bit" if torch.equal(skipped, whole) else "DIFFERENT", flush=True)
        nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
        in_rounds({"whole tile": lambda: launch(False), "skip masked": lambda: launch(True)}, 5, dtype, nbytes,
                  write, [str(dtype).split(".")[1], M, N], marked="whole tile")
        del x, skipped, whole
fused.SKIP_MASKED_PROGRAMS = False
