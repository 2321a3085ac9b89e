"""Why fp32 causal rows lost by vectors (issue 26). ab-causal-vectors.py (this session) had fp32 causal rows by
vectors at 65 % of the op's bytes at 16384 and 51 % at 151936, against 87 and 70 % for the element select, with a
third of its selects and no spills (sm_90). The element select reads every column (its loads are a plain row's);
by vectors a row reads its kept columns only. At 16384 (M = 8192, 75 % of x kept) the element select's 87 % of the
kept bytes is 99 % of a copy's bandwidth over all it moves, and vectors' 65 % is 65 %. Here, in one process and the
same configuration each, alternating rounds: the plain row (x · 0.125, no mask: what any row costs in that
configuration), causal by elements, causal by vectors; % of a copy of all of x read and y written (what the plain row
and the element select move), and for vectors also of its own bytes (its kept columns read). If vectors alone run below the plain row, their loads are the
cause (a read that stops inside a row: the CTAs past the diagonal idle while the cluster waits).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session16/ab-fp32-causal.py OUT.csv [N ...]
Written in the sixteenth session, when no device time was left to run it."""
import sys
from dataclasses import replace

import torch

from config_timing import ELEMS, VOCAB, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import cluster, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [16384, 32768, 50257, 128256, 151936]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
dtype = torch.float32
for N in WIDTHS:
    M = VOCAB.get(N, ELEMS // N)
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    causal = ops.get_op("causal").fusion_for(x)
    scaled = replace(causal, causal_m=None)
    cluster.CAUSAL_VECTORS = "none"
    config = cluster.config_for(N, dtype, causal)  # the element select's, which the plain row and vectors take too

    def launch(fusion, vectors: bool, x=x, config=config):
        cluster.CAUSAL_VECTORS = "all" if vectors else "none"
        return cluster.launch(x, fusion, config=config)[0]

    print(str(dtype), M, N, config, flush=True)
    everything = one_pass_traffic(M, N, dtype, causal, skips_causal=False).total_bytes
    kept = one_pass_traffic(M, N, dtype, causal).total_bytes
    figures = in_rounds({"plain row": lambda: launch(scaled, False), "causal, elements": lambda: launch(causal, False),
                         "causal, vectors": lambda: launch(causal, True)}, 5, dtype, everything, write,
                        [str(dtype).split(".")[1], M, N])
    vectors = sorted(figures["causal, vectors"])[2] * kept / everything
    print(str(dtype), M, N, f"causal, vectors: {vectors:.2f} % of a copy of the bytes it moves (its kept columns)",
          flush=True)
    del x
cluster.CAUSAL_VECTORS = "measured"
