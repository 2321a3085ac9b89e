"""Experiment: the cluster kernels with each CTA's share of the row (its step) a whole number of 128-byte lines,
and in whole pieces. cluster.layout shared a row in 16-byte vectors until 885b616, so where N / CTAs was not a
multiple of a line (fp32 151936: 9496 lanes, 37984 bytes a CTA) every warp's 512-byte load and store of CTAs 1…
straddled five lines instead of four (now it shares in whole lines where rows are: cluster.share_unit, and only
the default and whole pieces are timed there). Quack, 0.7 % ahead of the cluster backward at fp32 2048×151936 then,
shares the row in whole tiles (10240 lanes a CTA, the last CTA empty). Each configuration checked once against the
fp32 reference, then timed in rounds (config_timing.in_rounds), each call on the next of three copies of its
inputs.

    python3 scripts/line-steps.py OUT.csv [bf16|fp32] [forward|backward] [rounds=R] N [N ...]
"""

import dataclasses
import sys
from functools import partial

import torch

from config_timing import copy_gbps, csv_rows, cycling, in_rounds, input_copies, pass_inputs, time_checked

from softmax_bench.kernels import cluster, cluster_backward

COPIES = 3


def with_step(config: cluster.ClusterConfig, step: int, dtype: torch.dtype) -> cluster.ClusterConfig:
    vec = 16 // dtype.itemsize
    pieces = cluster.pieces_of(step, 32 * config.num_warps * vec, cluster.MAX_PIECES[cluster.holding(dtype)])
    return dataclasses.replace(config, step=step, pieces=pieces)


def steps(default: cluster.ClusterConfig, N: int, dtype: torch.dtype) -> dict:
    """default, its step rounded up to whole lines, and the step of its whole pieces (Quack's sharing), where they
    differ from the default, every lane of the row is still held and a CTA's share grows by at most an eighth."""
    line = cluster.LINE_BYTES // dtype.itemsize
    tried = {"default": default}
    for label, step in (("line-aligned", -(-default.step // line) * line), ("whole-pieces", sum(default.pieces))):
        if step != default.step and step * default.ctas >= N and step <= 1.125 * default.step:
            tried[label] = with_step(default, step, dtype)
    return tried


def run_forward(x: torch.Tensor, config: cluster.ClusterConfig):
    return cluster.launch(x, config=config)


def run_backward(y_dy: tuple[torch.Tensor, torch.Tensor], config: cluster.ClusterConfig):
    return cluster_backward.launch(*y_dy, config=config)


def main(path: str, dtype: torch.dtype, pass_: str, rounds: int, widths: list[int]) -> None:
    write_row = csv_rows(path, ["dtype", "M", "N", "pass", "config", "round", "ms", "pct_of_copy", "copy_gbps"])
    name = str(dtype).split(".")[-1]
    for N in widths:
        M, xs = input_copies(N, dtype, COPIES)
        inputs, ref, tolerances, nbytes = pass_inputs(xs, pass_)
        if pass_ == "forward":
            launch, default = run_forward, cluster.config_for(N, dtype)
        else:
            launch, default = run_backward, cluster_backward.config_for(N, dtype)
        calls = {}
        for label, config in steps(default, N, dtype).items():
            r = time_checked(partial(launch, inputs[0]), config, ref, tolerances, dtype, nbytes,
                             copy_gbps(dtype, nbytes), (name, N, pass_, label))
            if r is None or not r.ok:
                print(name, N, pass_, label, "skipped:", "error" if r is None else "WRONG", flush=True)
                continue
            print(name, N, pass_, label, config, "registers", r.launch.n_regs, "spills", r.launch.n_spills, flush=True)
            calls[label] = cycling([partial(launch, i, config) for i in inputs])
        in_rounds(calls, rounds, dtype, nbytes, write_row, [name, M, N, pass_], "default")
        del xs, inputs, ref, calls


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    dtype = next((named[a] for a in args if a in named), torch.bfloat16)
    pass_ = next((a for a in args if a in ("forward", "backward")), "backward")
    rounds = next((int(a.split("=")[1]) for a in args if a.startswith("rounds=")), 3)
    main(sys.argv[1], dtype, pass_, rounds, [int(a) for a in args if a.isdigit()])
