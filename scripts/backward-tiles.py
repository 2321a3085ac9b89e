"""Experiment: fused's backward tiles (rows a program × warps) and how it loads, beside torch.compile's backward of the
same cell, in rounds (config_timing.in_rounds: a drift of the GPU falls on all alike; a configuration's figure is its
median over the rounds). Each is checked once against the fp32 backward first. One CSV line per round and
configuration, flushed, so an interrupted run keeps what it measured. This chose launch_config's tiles and its
evict_last loads (docs/perf-notes.md, 2026-11-30 fifth session).

    python3 scripts/backward-tiles.py OUT.csv [bf16|fp32] [rounds=R] [rotate=K] [tiles=T,...] [modes=M,...]
        [op=OP] [log] MxN ...

A tile T is ROWSxWARPS, or ELEMS:WARPS (rows enough for ELEMS values a program); without tiles=, multiples of the
default's rows in 4–32 warps. A mode is how the loads treat L1 and L2 (tl.load's eviction_policy): plain, first
(evict_first) or last (evict_last). rotate=K: each call reads the next of K copies of y and dy, so that what a call
leaves in L2 (lines kept there by evict_last) cannot serve the next one. The default configuration is always timed.
op=OP (softmax_bench.ops: scaled, scaled-masked, causal, biased) and log: that form's backward (y the form's
forward in fp32, rounded; dy random), beside torch.compile of the form's eager code (peers' torch_compile), % of a
copy of the bytes its traffic model counts (thirty-fourth session: the log forms' rows of 512 and 1024, where
torch.compile led fused's backward by 0.4–2.0 points).
"""

import itertools
import sys
from functools import partial

import torch

from config_timing import copy_gbps, csv_rows, cycling, in_rounds, pass_inputs, time_checked

from softmax_bench import ops, peers
from softmax_bench.kernels import GRAD_TOLERANCES, PLAIN, backwards, fused_backward

WARPS = (4, 8, 16, 32)
ROW_FACTORS = (1, 2, 4, 8)
MODES = {"plain": {"EVICT": ""}, "first": {"EVICT": "evict_first"}, "last": {"EVICT": "evict_last"}}
MAX_ELEMS = 32768  # a program's tile at most what the forward holds at its widest
# 16 bytes to 64 values a thread: fewer ran at 53–90 % of a copy (fused-bwd-*.csv), more spill


def tiles(M: int, N: int, itemsize: int, only: list[str] | None = None) -> list[dict]:
    """The tiles to try: `only`'s, each ROWSxWARPS or ELEMS:WARPS (rows enough for ELEMS values a program, at least
    one), else multiples of the default's rows."""
    default = fused_backward.launch_config(M, N)
    block = default["BLOCK_N"]
    if only is not None:
        pairs = [(int(r), int(w)) for r, w in (t.split("x") for t in only if "x" in t)]
        pairs += [(max(1, int(e) // block), int(w)) for e, w in (t.split(":") for t in only if ":" in t)]
    else:
        rows = {default["ROWS"] * f for f in ROW_FACTORS} | {max(1, default["ROWS"] // 2)}
        pairs = [(r, w) for r in rows for w in WARPS]
    return [{"BLOCK_N": block, "ROWS": r, "num_warps": w} for r, w in sorted(set(pairs))
            if block * r <= MAX_ELEMS and r <= M and 16 <= block * r // (32 * w) * itemsize
            and block * r // (32 * w) <= 64]


def describe(config: dict) -> str:
    """ROWSxWARPS, and the loads' eviction policy if any."""
    return f"{config['ROWS']}x{config['num_warps']}" + (f" {config['EVICT']}" if config["EVICT"] else "")


def copies(y: torch.Tensor, dy: torch.Tensor, rotate: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(y, dy) and rotate − 1 copies of them (rotate=)."""
    return [(y, dy)] + [(y.clone(), dy.clone()) for _ in range(rotate - 1)]


def form_inputs(x: torch.Tensor, op: str, log: bool):
    """pass_inputs' for the backward of `op` (its log with `log`): (y, dy), the fp32 reference, tolerances, the
    bytes fused's traffic model counts; and the fusion."""
    fusion = ops.get_op(op).fusion_for(x, log=log)
    y = ops.reference(x, fusion, torch.float32).to(x.dtype)
    dy = torch.randn_like(y)
    M, N = x.shape
    nbytes = backwards()["fused"].traffic(M, N, x.dtype, fusion).total_bytes
    return (y, dy), ops.backward_reference(y, dy, fusion, torch.float32), GRAD_TOLERANCES, nbytes, fusion


def main(path: str, dtype: torch.dtype, rounds: int, shapes: list[tuple[int, int]], only: list[str] | None,
         modes: list[str], rotate: int, op: str | None = None, log: bool = False) -> None:
    write_row = csv_rows(path, ["dtype", "M", "N", "config", "round", "ms", "pct_of_copy", "copy_gbps"])
    name = str(dtype).split(".")[-1]
    for M, N in shapes:
        x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
        if op is None:
            [(y, dy)], ref, tolerances, nbytes = pass_inputs([x], "backward")
            fusion = PLAIN
        else:
            (y, dy), ref, tolerances, nbytes, fusion = form_inputs(x, op, log)
        pairs = copies(y, dy, rotate)
        default = fused_backward.launch_config(M, N, dtype, fused_backward.is_masked_log(fusion))
        calls = {}
        tried = [{**tile, **MODES[mode]} for tile, mode in itertools.product(tiles(M, N, dtype.itemsize, only), modes)]
        for config in ([] if default in tried else [default]) + tried:
            label = describe(config)
            r = time_checked(lambda c: fused_backward.launch(y, dy, fusion, config=c), config, ref, tolerances, dtype,
                             nbytes, copy_gbps(dtype, nbytes), (name, M, N, label))
            if r is None or not r.ok:
                print(name, M, N, label, "skipped:", "error" if r is None else f"WRONG err {r.max_err:.2g}")
                continue
            calls[label] = cycling([partial(fused_backward.launch, yk, dyk, fusion, config=config)
                                    for yk, dyk in pairs])
            print(name, M, N, label, "registers", r.launch.n_regs, flush=True)
        compiled = peers._torch_compile(fusion)
        graphs = []
        for k, (_, dyk) in enumerate(pairs):
            xk = (x if k == 0 else x.clone()).detach().requires_grad_()
            graphs.append(partial(torch.autograd.grad, compiled(xk), xk, dyk, retain_graph=True))
        err = (graphs[0]()[0].float() - ref).abs().max().item()
        print(name, M, N, "torch_compile err", f"{err:.2g}", flush=True)
        calls["torch_compile"] = cycling(graphs)
        in_rounds(calls, rounds, dtype, nbytes, write_row, [name, M, N], describe(default))
        del x, y, dy, ref, calls, pairs, graphs


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    dtype = next((named[a] for a in args if a in named), torch.bfloat16)
    rounds = next((int(a.split("=")[1]) for a in args if a.startswith("rounds=")), 5)
    shapes = [tuple(map(int, a.split("x"))) for a in args if "x" in a and a.replace("x", "").isdigit()]
    only = next((a.split("=")[1].split(",") for a in args if a.startswith("tiles=")), None)
    modes = next((a.split("=")[1].split(",") for a in args if a.startswith("modes=")), ["plain"])
    rotate = next((int(a.split("=")[1]) for a in args if a.startswith("rotate=")), 1)
    op = next((a.split("=")[1] for a in args if a.startswith("op=")), None)
    main(sys.argv[1], dtype, rounds, shapes, only, modes, rotate, op, "log" in args)
