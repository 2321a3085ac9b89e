"""Why fp32 causal rows lost by vectors (issue 26). ab-causal-vectors.py (this session) had fp32 causal rows by vectors
at 65 % of the op's bytes at 16384 and 51 % at 151936, against 87 and 70 % for the element select, with a third of
its selects and no spills (sm_90). The element select reads every column (its loads are a plain row's); by vectors a
row reads its kept columns only. At 16384 (M = 8192, 75 % of x kept) the element select's 87 % of the kept bytes is
99 % of a copy's bandwidth over all it moves, and vectors' 65 % is 65 %. Here, in one process and the same
configuration each, alternating rounds: the plain row (x · 0.125, no mask: what any row costs in that
configuration), causal by elements, causal by vectors; % of a copy of all of x read and y written (what the plain
row and the element select move), and for vectors also of its own bytes (its kept columns read). Each causal form
also with cluster.POSITIVE_SCALES (no select after a positive scale: compiled for sm_90, the select had ptxas put a
thread's loads into fewer register sets, vectors 0 and 1 in one at 16384 and 19 loads in 4 at 151936 by elements).
Prediction: with it, vectors at ≥ the plain row's speed over their own bytes, and causal fp32 151936 by elements
from 70 % to ≥ 85 % of the kept bytes.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session16/ab-fp32-causal.py OUT.csv [N ...]
Written in the sixteenth session, when no device time was left to run it."""
import sys
from dataclasses import replace

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [16384, 32768, 50257, 128256, 151936]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
dtype = torch.float32
for N in WIDTHS:
    M, [x] = input_copies(N, dtype, 1)
    causal = ops.get_op("causal").fusion_for(x)
    scaled = replace(causal, causal_m=None)
    cluster.CAUSAL_VECTORS = "none"
    config = cluster.config_for(N, dtype, causal)  # the element select's, which the plain row and vectors take too

    def launch(fusion, vectors: bool, positive: bool = False, x=x, config=config):
        cluster.CAUSAL_VECTORS = "all" if vectors else "none"
        cluster.POSITIVE_SCALES = positive
        return cluster.launch(x, fusion, config=config)[0]

    print(str(dtype), M, N, config, flush=True)
    everything = one_pass_traffic(M, N, dtype, causal, skips_causal=False).total_bytes
    kept = one_pass_traffic(M, N, dtype, causal).total_bytes
    for vectors in (False, True):
        same = torch.equal(launch(causal, vectors, False), launch(causal, vectors, True))
        print(str(dtype), M, N, "vectors" if vectors else "elements", "POSITIVE_SCALES bit for bit" if same
              else "POSITIVE_SCALES DIFFERENT", flush=True)
    figures = in_rounds({"plain row": lambda: launch(scaled, False),
                         "causal, elements": lambda: launch(causal, False),
                         "causal, elements, positive": lambda: launch(causal, False, True),
                         "causal, vectors": lambda: launch(causal, True),
                         "causal, vectors, positive": lambda: launch(causal, True, True)}, 5, dtype, everything,
                        write, [str(dtype).split(".")[1], M, N])
    for label in ("causal, vectors", "causal, vectors, positive"):
        own = sorted(figures[label])[2] * kept / everything
        print(str(dtype), M, N, f"{label}: {own:.2f} % of a copy of the bytes it moves (its kept columns)",
              flush=True)
    del x
cluster.CAUSAL_VECTORS, cluster.POSITIVE_SCALES = "measured", False
