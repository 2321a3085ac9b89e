"""Issue 26: torch.compile's lead at fp32 scaled rows of 8192 and 16384 (scaled-h200-c: 0.3–3.4 %; session29's
narrow-configs.py at 16384: torch_compile 101.2 % of a copy, fused's r1 w16 98.7 and r1 w32 98.9). fused at one row
a program with 4–32 warps (8–128 values a thread) and two rows at 8192, beside torch.compile, in alternating rounds
after a copy of the same bytes (config_timing.in_rounds); outputs checked first; spilling tiles are not timed.
Prediction: none of fused's tiles reaches torch.compile's figure at 16384 (its lead is not the tile's shape).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session30/wide-fp32-configs.py OUT.csv
"""
import itertools
import sys

import torch

from config_timing import ELEMS, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import PLAIN, TOLERANCES, fused, one_pass_traffic
from softmax_bench.peers import PEERS

write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "label", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, N in itertools.product(["scaled", "softmax"], [8192, 16384]):
    M, dtype = ELEMS // N, torch.float32
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x) if op != "softmax" else PLAIN
    reference = ops.reference(x, fusion, torch.float32)
    atol, rtol = TOLERANCES[dtype]
    default = fused.launch_config(M, N, dtype)
    tiles = {f"launch_config r{default['ROWS']} w{default['num_warps']}": default}
    for rows, warps in itertools.product([1, 2], [4, 8, 16, 32]):
        tile = {**default, "ROWS": rows, "num_warps": warps}
        if N * rows <= 16384 and tile != default:
            tiles[f"r{rows} w{warps}"] = tile
    calls = {}
    for label, config in tiles.items():
        y, launched = fused.launch(x, fusion, config)
        err = (y.float() - reference).abs().max().item()
        ok = err <= atol + rtol * reference.abs().max().item()
        print(op, N, label, "registers", launched.n_regs, "spilled", launched.n_spills, f"err {err:.2g}",
              "" if ok else "WRONG", flush=True)
        if ok and not launched.n_spills:
            calls[label] = lambda c=config: fused.launch(x, fusion, c)[0]
    compiled = PEERS["torch_compile"].make(fusion)
    print(op, N, "torch_compile", f"err {(compiled(x).float() - reference).abs().max().item():.2g}", flush=True)
    calls["torch_compile"] = lambda: compiled(x)
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [op, "fp32", M, N], marked=next(iter(calls)))
    del x, reference, calls, compiled
