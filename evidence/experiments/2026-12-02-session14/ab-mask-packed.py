"""cluster.MASK_PACKED (a keep-mask's four bytes select four packed 16-bit values at once) against the element
select it would replace, on the scaled-masked op (x · 0.125, a random keep-mask of x's shape), bf16 and fp16, in
alternating rounds after a copy of the same bytes (config_timing.in_rounds); each output checked bit for bit
against the other and against torch's fp32 result. % of a copy of the op's own bytes (x, the mask, y).
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-02-session14/ab-mask-packed.py OUT.csv [N ...]
Written in the fourteenth session, when no device time was left to run it."""
import sys

import torch

from config_timing import ELEMS, VOCAB, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import TOLERANCES, cluster, one_pass_traffic

WIDTHS = [int(a) for a in sys.argv[2:]] or [32768, 65536, 128256, 131072, 151936, 262144]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "select", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float16):
    for N in WIDTHS:
        M = VOCAB.get(N, ELEMS // N)
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        fusion = ops.get_op("scaled-masked").fusion_for(x)
        config = cluster.config_for(N, dtype, fusion)

        def launch(packed: bool):
            cluster.MASK_PACKED = packed  # read by kernel_constexprs at each launch
            return cluster.launch(x, fusion, config=config)[0]

        element, packed = launch(False), launch(True)
        ref = ops.reference(x, fusion, torch.float32)
        atol, rtol = TOLERANCES[dtype]
        err = (packed.float() - ref).abs().max().item()
        same = torch.equal(packed.view(torch.int16), element.view(torch.int16))
        print(str(dtype), M, N, config, "bit for bit" if same else "DIFFERENT", f"err {err:.2g}",
              "ok" if err <= atol + rtol * ref.abs().max().item() else "WRONG", flush=True)
        nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
        in_rounds({"element": lambda: launch(False), "packed": lambda: launch(True)}, 5, dtype, nbytes, write,
                  [str(dtype).split(".")[1], M, N], marked="element")
        del x, fusion, element, packed, ref
cluster.MASK_PACKED = False
