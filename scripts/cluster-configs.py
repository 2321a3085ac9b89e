"""Experiment: the cluster variant's CTAs per cluster and warps per CTA on the wide and vocabulary shapes, as % of a
copy of the same bytes measured in the same process; each configuration checked against torch's fp32 softmax
(log_softmax with `log`; the cluster backward's dx with `backward`) after it was timed. One CSV line per
measurement, flushed, so an interrupted run keeps what it measured.

    PYTHONPATH=. python3 scripts/cluster-configs.py OUT.csv [bf16|fp32] [log|backward|scaled|scaled-masked|causal|biased|loss|
        loss-grad] [N ...]

A fused op and `log` together time the op's log_softmax (a sweep's --op OP --log). MASK_SHAPE=rows/64 (any of
ops.MASK_SHAPES; unset: full) lays a scaled-masked or biased op's mask or bias out so (a sweep's --mask-shape).

COMPILE_ONLY=1 builds every configuration and times none: run so, a process a width side by side, before the
timing run, the kernels come from Triton's cache there. MASK_PACKED=0|1, CAUSAL_VECTORS=all|none|measured and
BIAS_BLEND=0|1 set those switches of kernels/cluster.py for the run (unset: as the module has them). EVICT=plain,
evict_last or both: a forward's loads in every configuration (unset: kernels.FORWARD_EVICT's; both: each
configuration with evict_last, then plain).

loss and loss-grad time cross_entropy's rows on a cluster (cluster.launch_cross_entropy) without and with the
gradient: the lse checked against torch's logsumexp, as % of a copy of x's bytes (one read: the sweep's roofline
of the loss's forward); the gradient (softmax · a factor) against torch's softmax times it, as % of a copy.

scaled, scaled-masked, causal and biased are the sweep's ops (softmax_bench.ops): % of a copy of the bytes the op must move
(x, the mask or bias, y; a causal row's kept columns), every configuration whose threads hold up to MAX_PER_THREAD
elements (not only config_for's masked share of them), in CTAs of 4, 8 or 16 warps (8: also capped at 80
registers), packed 16-bit rows also in two and three pieces. Every uncapped configuration is then timed again capped
at the registers that give an SM one more CTA of it (occupancy_cap, from the registers its launch took).
"""

import dataclasses
import itertools
import os
import sys

import torch

from config_timing import ELEMS, FUSED_OPS, VOCAB, copy_gbps, csv_rows, occupancy_cap, pass_inputs, time_checked

from softmax_bench import ops
from softmax_bench.kernels import FORWARD_EVICT, TOLERANCES, Fusion, cluster, cluster_backward, one_pass_traffic
from softmax_bench.kernels.aligned import window_lanes
COMPILE_ONLY = os.environ.get("COMPILE_ONLY") == "1"
if "MASK_PACKED" in os.environ:
    cluster.MASK_PACKED = os.environ["MASK_PACKED"] == "1"
cluster.CAUSAL_VECTORS = os.environ.get("CAUSAL_VECTORS", cluster.CAUSAL_VECTORS)
if "BIAS_BLEND" in os.environ:
    cluster.BIAS_BLEND = os.environ["BIAS_BLEND"] == "1"
LOSS_MODES = ("loss", "loss-grad")
MASK_SHAPE = os.environ.get("MASK_SHAPE", "full")
FORWARD_EVICTS = {"plain": ("",), "evict_last": ("evict_last",), "both": ("evict_last", "")}.get(
    os.environ.get("EVICT", ""), (FORWARD_EVICT,))
WIDTHS = [16384, 24576, 32768, 49152, 50257, 65536, 98304, 128256, 131072, 151936, 196608, 262144]


CAPPED_REGISTERS = cluster.CAPPED_REGISTERS  # at 4 warps: 4 CTAs an SM instead of 3 when the compiler uses 129–168


def configs(N: int, dtype: torch.dtype, rows: int = 1, fusion: Fusion | None = None):
    """Clusters of 2–16 CTAs of 4 or 8 warps whose threads hold 16 to 128 elements (the ranges where the Gluon
    probe's best configurations lay, ../shared/anchors/probes/README.md, and pairs for rows of 16384–32768,
    where fused's one CTA a row trails Quack in bf16); the 4-warp ones also with their
    registers capped at CAPPED_REGISTERS where a thread holds at most 80 elements (fp32 151936's default then
    compiles to 128 registers, no spills, on sm_90: docs/perf-notes.md). The backward's threads hold `rows` = 2
    rows' lanes (y's and dy's): 8 to 64 elements of each, in CTAs of 4, 8 or 16 warps. Packed 16-bit values are
    held padded in one piece (cluster.MAX_PIECES) and, where that differs, in up to three as fp32 is."""
    lanes = window_lanes(N, dtype)
    how = cluster.holding(dtype) if fusion is None else cluster.holding(dtype, fusion, N)
    for ctas, warps in itertools.product((2, 4, 8, 16), (4, 8) if rows == 1 and fusion is None else (4, 8, 16)):
        config = cluster.layout(lanes, ctas, warps, dtype, how)
        per_thread = config.span // (32 * warps)
        if 16 // rows <= per_thread <= cluster.MAX_PER_THREAD[how][warps] // rows:
            yield config
            if warps == 4 and per_thread <= 80:
                yield dataclasses.replace(config, max_registers=CAPPED_REGISTERS)
            if warps == 8 and fusion is not None:  # 80: three CTAs of 8 warps an SM, not two
                yield dataclasses.replace(config, max_registers=80)
            unit = 32 * warps * (16 // dtype.itemsize)
            # packed 16-bit values held in up to two or three pieces, less padded, as fp32 is
            for most in (2, cluster.MAX_PIECES["fp32"]) if fusion is not None else (cluster.MAX_PIECES["fp32"],):
                pieces = cluster.pieces_of(config.step, unit, most)
                if pieces != config.pieces:
                    yield dataclasses.replace(config, pieces=pieces)


def case(M: int, N: int, dtype: torch.dtype, mode: str, log: bool = False):
    """(launch(config), its fp32 reference, tolerances, bytes it moves, config_for's choice, the op's Fusion or None)
    for one M×N cell; a fused mode's log_softmax with `log`."""
    x = torch.randn(M, N, dtype=dtype, device="cuda") * 3
    if mode in FUSED_OPS:
        fusion = ops.get_op(mode).fusion_for(x, MASK_SHAPE, log=log)
        traffic = one_pass_traffic(M, N, dtype, fusion, skips_causal=True)
        default = cluster.config_for(N, dtype, cluster.laid_out(fusion, N, dtype, M))  # as a launch takes it
        return (lambda config: cluster.launch(x, fusion, config=config)), ops.reference(x, fusion, torch.float32), \
            TOLERANCES, traffic.total_bytes, default, fusion
    if mode in LOSS_MODES:
        grad = mode == "loss-grad"
        lse = torch.empty(M, device="cuda")
        dx = torch.empty_like(x) if grad else None
        target, scale = torch.randint(0, N, (M,), device="cuda"), torch.full((1,), 0.5, device="cuda")

        def run(config):  # every row's factor 0.5 (no row ignored)
            launch = cluster.launch_cross_entropy(x, dx, lse, target, None, scale, config=config)
            return (dx if grad else lse[:, None]), launch

        ref = torch.softmax(x.float(), -1) * 0.5 if grad else torch.logsumexp(x.float(), -1)[:, None]
        return run, ref, TOLERANCES, (2 if grad else 1) * x.nbytes, cluster.config_for(N, dtype), None
    if mode == "log":
        log = Fusion(log=True)
        return (lambda config: cluster.launch(x, log, config=config)), torch.log_softmax(x.float(), -1), \
            TOLERANCES, 2 * x.nbytes, cluster.config_for(N, dtype, log), None
    [inputs], ref, tolerances, nbytes = pass_inputs([x], mode)
    if mode == "forward":
        return (lambda config: cluster.launch(inputs, config=config)), ref, tolerances, nbytes, \
            cluster.config_for(N, dtype), None
    return (lambda config: cluster_backward.launch(*inputs, config=config)), ref, tolerances, nbytes, \
        cluster_backward.config_for(N, dtype), None


def main(path: str, dtypes: list[torch.dtype], widths: list[int], mode: str = "forward", log: bool = False) -> None:
    write_row = csv_rows(path, ["pass", "dtype", "M", "N", "ctas", "num_warps", "step", "pieces", "max_registers",
                                "evict", "default", "n_regs", "n_spills", "ms", "ms_p20", "ms_p80", "pct_of_copy",
                                "copy_gbps", "max_err", "ok"])
    for dtype in dtypes:
        for N in widths:
            M = VOCAB.get(N, ELEMS // N)
            run, ref, tolerances, nbytes, default, fusion = case(M, N, dtype, mode, log)
            tried = configs(N, dtype, 2 if mode == "backward" else 1, fusion)
            if mode == "backward":  # loading as the default does (cluster_backward.EVICT)
                tried = (dataclasses.replace(config, evict=default.evict) for config in tried)
            elif mode not in LOSS_MODES:  # the forward's loads as EVICT asks
                tried = (dataclasses.replace(config, evict=evict) for config in tried for evict in FORWARD_EVICTS)
            tried = list(dict.fromkeys([default, *tried]))
            if COMPILE_ONLY:  # fill Triton's cache, in processes side by side, for a timing run after them
                for config in tried:
                    try:
                        run(config)
                    except Exception as e:  # noqa: BLE001
                        print(dtype, N, config, "error", type(e).__name__, flush=True)
                continue
            copy = copy_gbps(dtype, nbytes)
            best = None
            for config in tried:  # grows: each uncapped configuration then capped at a CTA more an SM
                r = time_checked(run, config, ref, tolerances, dtype, nbytes, copy, (dtype, N, config))
                if r is None:
                    continue
                cap = occupancy_cap(r.launch.n_regs, config.num_warps) if config.max_registers is None else None
                if cap is not None and dataclasses.replace(config, max_registers=cap) not in tried:
                    tried.append(dataclasses.replace(config, max_registers=cap))
                t, pct = r.timing, r.pct_of_copy
                form = mode + (" log" if log else "") + ("" if MASK_SHAPE == "full" else " " + MASK_SHAPE)
                write_row([form, str(dtype).split(".")[-1], M, N, config.ctas,
                           config.num_warps, config.step, "+".join(map(str, config.pieces)), config.max_registers,
                           config.evict or "plain", config == default, r.launch.n_regs, r.launch.n_spills, t.ms,
                           t.ms_p20, t.ms_p80, round(pct, 1), round(copy), r.max_err, r.ok])
                if r.ok and (best is None or pct > best[0]):
                    best = (pct, config.ctas, config.num_warps, config.max_registers, config.evict, r.launch.n_regs)
                print(dtype, M, N, config.ctas, config.num_warps, config.pieces, config.max_registers,
                      config.evict or "plain", r.launch.n_regs,
                      f"{pct:.1f}%", f"err {r.max_err:.2g}", "" if r.ok else "WRONG",
                      "(default)" if config == default else "", flush=True)
            print("BEST", mode, dtype, N, best, flush=True)
            del run, ref


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    dtypes = [named[a] for a in args if a in named] or list(named.values())
    mode = next((a for a in args if a in FUSED_OPS), None) or next(
        (a for a in args if a in ("log", "backward", *LOSS_MODES)), "forward")
    log = mode in FUSED_OPS and "log" in args
    main(sys.argv[1], dtypes, [int(a) for a in args if a.isdigit()] or WIDTHS, mode, log)
