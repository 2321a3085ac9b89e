"""fused.HEAVIEST_FIRST and cluster.HEAVIEST_FIRST (causal rows in programs from the last row to the first: the
longest rows start first, the shortest fill the last wave) against row order, on the default grid's causal cells
whose rows keep unequal shares of their columns, in alternating rounds after a copy of the same bytes
(config_timing.in_rounds), each output checked bit for bit against the other; fused's cells also at half and twice
their warps. % of a copy of the op's own bytes. Then the premise of the roofline for rows that are mostly
written zeros: a write alone (y.zero_()) and a copy, each in GB/s of the bytes it moves.
Prediction (twentieth session): the cells of M ≥ N (4000, 4096, 8192: a triangle after the skipped rows) gain
the tail of their last wave, ~5–12 %; the cells of M < N (16384 and up: rows keep N − M to N) little.
    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-03-session20/ab-heaviest-first.py OUT.csv"""
import sys

import torch

from config_timing import SETTINGS, copy_gbps, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import cluster, fused, one_pass_traffic
from softmax_bench.timing import measure

CELLS = [("fused", 4096, 4000), ("fused", 32768, 4096), ("fused", 16384, 8192), ("cluster", 8192, 16384),
         ("cluster", 4096, 32768), ("cluster", 8192, 50257), ("cluster", 2048, 151936)]
write = csv_rows(sys.argv[1], ["dtype", "M", "N", "variant", "form", "round", "ms", "pct_of_copy", "copy_gbps"])
for dtype in (torch.bfloat16, torch.float32):
    for variant, M, N in CELLS:
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        fusion = ops.get_op("causal").fusion_for(x)
        module = fused if variant == "fused" else cluster

        def launch(heaviest_first: bool, warps_by=1.0, x=x, fusion=fusion, module=module):
            module.HEAVIEST_FIRST = heaviest_first  # read at each launch
            if module is cluster:
                return cluster.launch(x, fusion)[0]
            config = dict(fused.launch_config(*x.shape, x.dtype))
            config["num_warps"] = int(config["num_warps"] * warps_by)
            return fused.launch(x, fusion, config)[0]

        first, in_order = launch(True), launch(False)
        print(str(dtype), variant, M, N, "bit for bit" if torch.equal(first, in_order) else "DIFFERENT", flush=True)
        calls = {"row order": lambda: launch(False), "last first": lambda: launch(True)}
        if variant == "fused":
            calls |= {"last first, half the warps": lambda: launch(True, 0.5),
                      "last first, twice the warps": lambda: launch(True, 2.0)}
        nbytes = one_pass_traffic(M, N, dtype, fusion, skips_causal=True).total_bytes
        in_rounds(calls, 5, dtype, nbytes, write, [str(dtype).split(".")[1], M, N, variant], marked="row order")
        y = torch.empty_like(x)
        zero = measure(lambda: y.zero_(), SETTINGS, interpret=False)
        copy = measure_copy(dtype, M * N, SETTINGS, interpret=False)
        print(str(dtype), M, N, f"write alone {y.nbytes / zero.ms / 1e6:.0f} GB/s, copy {copy['gbps']:.0f} GB/s, "
              f"op's bytes {nbytes / 2**20:.0f} MiB of {2 * x.nbytes / 2**20:.0f}", flush=True)
        write([str(dtype).split(".")[1], M, N, "torch", "write alone", 0, zero.ms,
               round(100 * y.nbytes / zero.ms / 1e6 / copy["gbps"], 2), round(copy["gbps"])])
        del x, y, first, in_order
fused.HEAVIEST_FIRST = cluster.HEAVIEST_FIRST = True
