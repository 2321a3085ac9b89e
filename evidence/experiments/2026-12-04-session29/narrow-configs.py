"""Issue 26: torch.compile's lead at fp32 rows fused holds (scaled-h200-c: N = 32–1024, 8192, 16384 by 0.3–3.4 %;
the plain softmax's rows no faster than the scaled ones). fused in launch_config's tile and in every tile of 8, 16
or 32 values a thread with 1–32 warps and 1–64 rows a program (BLOCK_N · rows ≤ 16384), beside torch.compile of the
eager code, in alternating rounds after a copy of the same bytes (config_timing.in_rounds), each output checked
against the float32 reference first. % of a copy of the op's bytes (x read, y written).
Prediction (twenty-ninth session, from torch 2.11's _persistent_reduction_configs): for 256 ≤ N ≤ 1024 inductor
runs min(1024 // N, 8) rows in one warp; so at fp32 512 and 1024 a one-warp tile of those rows is ≥ torch.compile's
figure and 1.5–2 points above launch_config's (4 warps, 4 and 2 rows). At 8192 and 16384 no prediction: inductor's
tile there is ours (one row, N // 128 warps capped at 16 or 32).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-04-session29/narrow-configs.py OUT.csv [N ...]

NARROW_DTYPE=bfloat16 times 16-bit rows instead (added in the thirtieth session, after fp32's rows ran best in
programs of 4 KB; 16-bit rows' programs hold 4 KB already: does 2 KB run faster there too?).
"""
import itertools
import os
import sys

import torch

from config_timing import ELEMS, csv_rows, in_rounds
from softmax_bench import ops
from softmax_bench.kernels import PLAIN, TOLERANCES, fused, one_pass_traffic
from softmax_bench.peers import PEERS

WIDTHS = [int(a) for a in sys.argv[2:]] or [32, 128, 512, 1024, 8192, 16384]
DTYPE = getattr(torch, os.environ.get("NARROW_DTYPE", "float32"))
LABEL = {torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[DTYPE]


def tiles(N: int, default: dict) -> dict[str, dict]:
    """launch_config's tile, then each (rows, warps) with 8, 16 or 32 values a thread."""
    block = default["BLOCK_N"]
    found = {f"launch_config r{default['ROWS']} w{default['num_warps']}": default}
    for rows, warps in itertools.product([1, 2, 4, 8, 16, 32, 64], [1, 2, 4, 8, 16, 32]):
        per_thread = block * rows // (32 * warps)
        tile = {**default, "ROWS": rows, "num_warps": warps}
        if block * rows <= 16384 and per_thread in (8, 16, 32) and rows <= ELEMS // N and tile != default:
            found[f"r{rows} w{warps}"] = tile
    return found


write = csv_rows(sys.argv[1], ["op", "dtype", "M", "N", "label", "round", "ms", "pct_of_copy", "copy_gbps"])
for op, N in itertools.product(["scaled", "softmax"], WIDTHS):
    M, dtype = ELEMS // N, DTYPE
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    fusion = ops.get_op(op).fusion_for(x) if op != "softmax" else PLAIN
    reference = ops.reference(x, fusion, torch.float32)
    atol, rtol = TOLERANCES[dtype]
    calls = {}
    for label, config in tiles(N, fused.launch_config(M, N, dtype)).items():
        try:
            y, launched = fused.launch(x, fusion, config)
        except Exception as e:  # noqa: BLE001 - a tile that does not build is a line, not the end
            print(op, N, label, "error", type(e).__name__, str(e)[:120], flush=True)
            continue
        err = (y.float() - reference).abs().max().item()
        ok = err <= atol + rtol * reference.abs().max().item()
        print(op, N, label, "registers", launched.n_regs, "spilled", launched.n_spills, f"err {err:.2g}",
              "" if ok else "WRONG", flush=True)
        if ok and not launched.n_spills:
            calls[label] = lambda c=config: fused.launch(x, fusion, c)[0]
    compiled = PEERS["torch_compile"].make(fusion)
    err = (compiled(x).float() - reference).abs().max().item()
    print(op, N, "torch_compile", f"err {err:.2g}", flush=True)
    calls["torch_compile"] = lambda: compiled(x)
    nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
    in_rounds(calls, 5, dtype, nbytes, write, [op, LABEL, M, N], marked=next(iter(calls)))
    del x, reference, calls, compiled
