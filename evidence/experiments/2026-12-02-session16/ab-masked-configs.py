"""The masked cluster rows' configuration (issue 26): MEASURED's ("masked", …) shapes and config_for's masked share of
the registers were chosen in the tenth session under the element select, which took a quarter of a thread's
registers; since the packed select (MASK_PACKED, fifteenth session) a masked 16-bit row compiles to few more
registers than a plain row (sm_90, bf16 128256: 48 in the rule's 16 × 8 warps, 72 in the plain rows' 16 × 4; 262144:
128 in 16 × 4, no spills). For causal rows, the plain rows' configuration was worth 10–20 points once their selects
went (ab-causal-vectors.py). Here the scaled-masked op (x · 0.125, a random keep-mask of x's shape, on the 16-byte
grid) at the default grid's cluster widths, the rule's configuration against the plain rows', in alternating rounds
after a copy of the same bytes (config_timing.in_rounds), each output checked against torch's fp32. % of a copy of
the op's own bytes (x and the mask read, y written). fp32 rows also with cluster.MASK_BLEND_F32 and POSITIVE_SCALES
(the mask as bits, no select after the scale: compiled for sm_90, fp32 50257's 7 loads a thread in 7 register sets,
not 4). Prediction: bf16 50257 from 74 % to ≥ 85 %, 151936 from 91.5 to ≥ 94; fp32 50257 blended from 76 % to ≥ 85
%, the plain rows' configuration no better for fp32 (its select is still an element's).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session16/ab-masked-configs.py OUT.csv [N ...]
Written in the sixteenth session, when no device time was left to run it."""
import sys

import torch

from config_timing import csv_rows, in_rounds, input_copies
from softmax_bench import ops
from softmax_bench.kernels import PLAIN, TOLERANCES, cluster, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [16384, 32768, 50257, 65536, 128256, 131072, 151936, 262144]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for N in WIDTHS:
        M, [x] = input_copies(N, dtype, 1)
        fusion = ops.get_op("scaled-masked").fusion_for(x)
        rule, plain = cluster.config_for(N, dtype, fusion), cluster.config_for(N, dtype, PLAIN)
        # (label, configuration, MASK_BLEND_F32 and POSITIVE_SCALES): fp32 rows also blended, with a positive scale
        forms = [("rule's", rule, False)] + ([("plain rows'", plain, False)] if plain != rule else [])
        if dtype == torch.float32:
            forms += [("rule's, blended", rule, True)] + ([("plain rows', blended", plain, True)] if plain != rule
                                                          else [])
        if len(forms) == 1:
            print(str(dtype), N, "the same configuration", rule, flush=True)
            continue
        ref = ops.reference(x, fusion, torch.float32)
        atol, rtol = TOLERANCES[dtype]
        calls = {}
        for label, config, blend in forms:
            def call(config=config, blend=blend, x=x, fusion=fusion):
                cluster.MASK_BLEND_F32 = cluster.POSITIVE_SCALES = blend  # read by kernel_constexprs at each launch
                return cluster.launch(x, fusion, config=config)
            y, launch = call()
            err = (y.float() - ref).abs().max().item()
            print(str(dtype), M, N, label, config, f"{launch.n_regs} registers, {launch.n_spills} spilled",
                  f"err {err:.2g}", "ok" if err <= atol + rtol * ref.abs().max().item() else "WRONG", flush=True)
            calls[label] = lambda call=call: call()[0]
        nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
        in_rounds(calls, 5, dtype, nbytes, write, [str(dtype).split(".")[1], M, N], marked="rule's")
        del x, fusion, ref, calls
cluster.MASK_BLEND_F32 = cluster.POSITIVE_SCALES = False
