"""cluster.CAUSAL_VECTORS (a causal row read a whole vector at a time, the vector its diagonal cuts beside the end
vectors) against the element select, on the causal op (x · 0.125 under a bottom-right causal mask, the M rows as
queries), at the default grid's cluster widths, in alternating rounds after a copy of the same bytes
(config_timing.in_rounds): the element select in the rule's config, vectors in the rule's config, vectors in the
plain softmax's config (which the element select's registers kept causal rows from). Each checked against the
element select and torch's fp32 result. % of a copy of the op's own bytes (its kept columns read, y written).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session15/ab-causal-vectors.py OUT.csv [N ...]
Written in the fifteenth session, when no device time was left to run it."""
import sys

import torch

from config_timing import ELEMS, VOCAB, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import PLAIN, TOLERANCES, cluster, one_pass_traffic

cluster.CAUSAL_VECTORS = "none"  # config_for's rule as the element select had it
WIDTHS = [int(a) for a in sys.argv[2:]] or [16384, 32768, 50257, 65536, 128256, 131072, 151936, 262144]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32, torch.float16):
    for N in WIDTHS:
        M = VOCAB.get(N, ELEMS // N)
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        fusion = ops.get_op("causal").fusion_for(x)
        rule, plain = cluster.config_for(N, dtype, fusion), cluster.config_for(N, dtype, PLAIN)

        def launch(vectors: bool, config):
            cluster.CAUSAL_VECTORS = "all" if vectors else "none"  # read by kernel_constexprs at each launch
            return cluster.launch(x, fusion, config=config)[0]

        element = launch(False, rule)
        ref = ops.reference(x, fusion, torch.float32)
        atol, rtol = TOLERANCES[dtype]
        for label, config in (("vectors, rule's", rule), ("vectors, plain's", plain)):
            y = launch(True, config)
            err = (y.float() - ref).abs().max().item()
            print(str(dtype), M, N, label, config, f"err {err:.2g}",
                  "ok" if err <= atol + rtol * ref.abs().max().item() else "WRONG",
                  f"{(y == element).double().mean().item():.4%} equal to the element select's", flush=True)
        nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
        in_rounds({"element, rule's": lambda: launch(False, rule), "vectors, rule's": lambda: launch(True, rule),
                   "vectors, plain's": lambda: launch(True, plain)}, 5, dtype, nbytes, write,
                  [str(dtype).split(".")[1], M, N], marked="element, rule's")
        del x, fusion, element, ref
cluster.CAUSAL_VECTORS = "none"  # (it was a bool when this ran: True, False)
