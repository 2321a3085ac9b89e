"""Experiment: the one-pass kernels' loads with and without evict_last (tl.load's eviction_policy: L1::evict_last
and an L2 evict_last policy), timed in rounds (config_timing.in_rounds), each call on the next of three copies of
its inputs so that lines a call keeps in L2 cannot serve the next. fused's backward ran 1.3–2 % faster with
evict_last on the H200 (scripts/backward-tiles.py, docs/perf-notes.md): does the forward, and the cluster's?
Each configuration is checked once against the fp32 reference first. Its rows say "plain" and "evict_last", and
"(default)" marks the one the launch takes (until the thirty-first session, whose forward loads became evict_last,
they said "default" for plain).

    python3 scripts/eviction.py OUT.csv [bf16|fp32] [rounds=R] [op=OP] [log] [compile] N [N ...]

op=OP: the forward kernels of that fused form (softmax_bench.ops: scaled, causal, ...; a mask or bias is made once
and read by every copy of x); the backward is timed for the plain softmax only. compile: torch.compile of the
form's eager code in the same rounds (its forward loads evict_last: docs/perf-notes.md, thirtieth session). log: the
log_softmax of the form (cluster.LOG_PLAIN_LOADS' question).
"""

import dataclasses
import sys
from functools import partial

import torch

from config_timing import copy_gbps, csv_rows, cycling, in_rounds, input_copies, pass_inputs, time_checked

from softmax_bench import ops
from softmax_bench.kernels import PLAIN, Fusion, cluster, cluster_backward, fused, one_pass_traffic
from softmax_bench.peers import PEERS

COPIES = 3


def kernels(N: int, dtype: torch.dtype, fusion: Fusion = PLAIN):
    """(name, pass, launch(input, config) for the forward or launch((y, dy), config), its config with plain loads,
    the same with evict_last, the label of the one the launch takes by default) of each kernel that runs rows of N."""
    if N <= fused.MAX_N:
        plain = fused.launch_config(1 << 20, N, dtype, fusion)
        yield "fused", "forward", lambda x, c: fused.launch(x, fusion, c), plain, {**plain, "EVICT": "evict_last"}, \
            fused.forward_evict(N, fusion) or "plain"
    if cluster.VARIANT.supports(N, dtype):
        default = cluster.config_for(N, dtype, fusion)
        yield "cluster", "forward", lambda x, c: cluster.launch(x, fusion, c), dataclasses.replace(default, evict=""), \
            dataclasses.replace(default, evict="evict_last"), default.evict or "plain"
    if fusion.plain and cluster_backward.BACKWARD.supports(N, dtype):
        default = cluster_backward.config_for(N, dtype)
        yield "cluster", "backward", lambda t, c: cluster_backward.launch(*t, config=c), \
            dataclasses.replace(default, evict=""), dataclasses.replace(default, evict="evict_last"), \
            default.evict or "plain"


def main(path: str, dtype: torch.dtype, rounds: int, widths: list[int], op: str = "softmax",
         with_compile: bool = False, log: bool = False) -> None:
    write_row = csv_rows(path, ["dtype", "M", "N", "kernel", "config", "round", "ms", "pct_of_copy", "copy_gbps"])
    name = str(dtype).split(".")[-1]
    for N in widths:
        M, xs = input_copies(N, dtype, COPIES)
        fusion = ops.get_op(op).fusion_for(xs[0], log=log)
        compiled_timed = False
        for kernel, pass_, launch, plain, evicting, default in kernels(N, dtype, fusion):
            inputs, ref, tolerances, nbytes = pass_inputs(xs, pass_)
            if pass_ == "forward" and not fusion.plain:
                ref = ops.reference(xs[0], fusion, torch.float32)
                nbytes = one_pass_traffic(M, N, dtype, fusion).total_bytes
            calls = {}
            for label, config in (("plain", plain), ("evict_last", evicting)):
                r = time_checked(partial(launch, inputs[0]), config, ref, tolerances, dtype, nbytes,
                                 copy_gbps(dtype, nbytes), (name, N, kernel, pass_, label))
                if r is None or not r.ok:
                    print(name, N, kernel, pass_, label, "skipped:", "error" if r is None else "WRONG", flush=True)
                    continue
                print(name, N, kernel, pass_, label, "registers", r.launch.n_regs, "spills", r.launch.n_spills)
                calls[label] = cycling([partial(launch, i, config) for i in inputs])
            if with_compile and pass_ == "forward" and not compiled_timed:  # once a width, beside the first kernel
                compiled_timed = True
                compiled = PEERS["torch_compile"].make(fusion)
                err = (compiled(inputs[0]).float() - ref).abs().max().item()
                print(name, N, "torch_compile", f"err {err:.2g}", flush=True)
                calls["torch_compile"] = cycling([partial(compiled, i) for i in inputs])
            in_rounds(calls, rounds, dtype, nbytes, write_row,
                      [name, M, N, f"{kernel}-{pass_}"], default)
            del inputs, ref, calls
        del xs


if __name__ == "__main__":
    named = {"bf16": torch.bfloat16, "fp32": torch.float32}
    args = sys.argv[2:]
    dtype = next((named[a] for a in args if a in named), torch.bfloat16)
    rounds = next((int(a.split("=")[1]) for a in args if a.startswith("rounds=")), 3)
    op = next((a.split("=")[1] for a in args if a.startswith("op=")), "softmax")
    main(sys.argv[1], dtype, rounds, [int(a) for a in args if a.isdigit()], op, "compile" in args, "log" in args)
