"""The host cost of a replayed call looked up by replayed.cpp (replay.CXX_REPLAYED, the forty-second session) against
the Python look-up, both serving the same launcher.Replay, timed on a machine with no GPU: every launch goes to a
CUDA driver that does nothing (the thirty-sixth session's fake_libcuda.c), so what is timed is everything a call
does but the driver's own work.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session42/cxx-replayed.py OUT.csv [--rounds 7 --calls 20000]

The launch is fused's for a bf16 64×4000 softmax, as the thirty-seventh session's replayed-glue.py sets it up. Rows,
µs a call, the median of the rounds, each round timing every row in turn:
- the key and its look-up alone: replay.plan_key + PLANS.get, against replayed.cpp's replayed on a kind with no plan
  (a miss: the key built and looked up, nothing launched);
- y's allocation: torch.empty_like(x) against replayed.cpp's empty_like(x), and each with dtype= and
  memory_format= (the fused cast's y);
- the Replay alone, its y by torch.empty_like, then by replayed.cpp's, then with the tensors' addresses read by
  replayed.cpp's address_of too (launcher.c's fill, not data_ptr());
- softmax_bench.softmax(x), softmax(x, scale=0.5, mask=mask) and log_softmax(x) as a user calls them: replay.replayed in Python and the Replay
  allocating through torch.empty_like (as on main), against replayed.cpp's replayed, empty_like and address_of;
- torch.softmax(x) (the CPU's kernel: not the H200's torch row, for scale only).
"""

import argparse
import csv
import importlib.util
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import torch
import triton

import softmax_bench
from softmax_bench import launcher, replay

SESSION37 = Path(__file__).parents[1] / "2026-12-05-session37" / "replayed-glue.py"
spec = importlib.util.spec_from_file_location("replayed_glue", SESSION37)
session37 = importlib.util.module_from_spec(spec)
spec.loader.exec_module(session37)
glue = session37.glue


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    where = tempfile.mkdtemp()
    module = launcher.driver_bound(glue.fake_driver(where))
    cxx = replay.cxx_built()
    cxx.configure(replay.PLANS, replay.FUSED_CASTS)

    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    compiled, grid, _, template, slots, _ = glue.compiled_launch(x, y, where)
    own_launch = launcher.make_launch(compiled, grid, template, slots, 0)
    plan_triton = replay.Plan([(replay.launcher(compiled, grid), template, slots)], abs, 0, x.dtype, like_x=True)
    replay_plan = module.Replay((own_launch,), plan_triton, abs, 0, None)
    mask = torch.rand(64, 4000) > 0.5
    for log in (False, True):
        replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto", log)] = replay_plan
    replay.PLANS[replay.plan_key(x, -1, 0.5, mask, False, "auto")] = replay_plan  # (the launch takes x for the mask)
    wide = torch.empty(64, 4008, dtype=torch.bfloat16)  # a kind with no plan
    python_softmax = partial(softmax_bench.softmax, x)
    python_log_softmax = partial(softmax_bench.log_softmax, x)

    python = (replay.python_replayed, torch.empty_like, None)
    cxx_allocating = (replay.python_replayed, cxx.empty_like, None)
    all_cxx = (cxx.replayed, cxx.empty_like, cxx.address_of)
    # name: (call, (replay.replayed, the Replay's allocation, its address_of) while it is timed)
    rows = {
        "key and look-up, python (plan_key + PLANS.get)": (lambda: replay.PLANS.get(
            replay.plan_key(wide, -1, None, None, False, "auto", False)), python),
        "key and look-up, c++ (replayed on a miss)": (partial(cxx.replayed, wide, -1, None, None, None, False, "auto",
                                                               False, None), python),
        "torch.empty_like(x)": (partial(torch.empty_like, x), python),
        "c++ empty_like(x)": (partial(cxx.empty_like, x), python),
        "torch.empty_like(x, dtype=fp32, contiguous)": (partial(torch.empty_like, x, dtype=torch.float32,
                                                                memory_format=torch.contiguous_format), python),
        "c++ empty_like(x, dtype=fp32, contiguous)": (partial(cxx.empty_like, x, dtype=torch.float32,
                                                              memory_format=torch.contiguous_format), python),
        "Replay alone, y by torch.empty_like": (partial(replay_plan, x, None, None), python),
        "Replay alone, y by c++ empty_like": (partial(replay_plan, x, None, None), cxx_allocating),
        "Replay alone, y by c++ empty_like, addresses by c++": (partial(replay_plan, x, None, None), all_cxx),
        "softmax_bench.softmax, python replayed (main)": (python_softmax, python),
        "softmax_bench.softmax, c++ replayed, empty_like, addresses": (python_softmax, all_cxx),
        "softmax_bench.softmax scale, mask, python replayed (main)": (partial(softmax_bench.softmax, x, scale=0.5,
                                                                               mask=mask), python),
        "softmax_bench.softmax scale, mask, c++ replayed, ...": (partial(softmax_bench.softmax, x, scale=0.5,
                                                                          mask=mask), all_cxx),
        "softmax_bench.log_softmax, python replayed (main)": (python_log_softmax, python),
        "softmax_bench.log_softmax, c++ replayed, empty_like, addresses": (python_log_softmax, all_cxx),
        "torch.softmax(x) (the CPU's kernel)": (partial(torch.softmax, x, -1), python),
    }
    times = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, (call, (replayed, empty_like, address_of)) in rows.items():
            replay.replayed = replayed
            module.configure(empty_like, torch.contiguous_format, replay._runtime_knobs(), address_of)
            for _ in range(200):
                call()
            began = time.perf_counter()
            for _ in range(args.calls):
                call()
            times[name].append((time.perf_counter() - began) / args.calls * 1e6)
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["row", "median_us", "min_us", "max_us", "rounds", "calls", "torch", "triton", "python"])
        for name, got in times.items():
            out.writerow([name, f"{statistics.median(got):.3f}", f"{min(got):.3f}", f"{max(got):.3f}", args.rounds,
                          args.calls, torch.__version__, triton.__version__, sys.version.split()[0]])
            print(f"{name:64s} {statistics.median(got):7.3f} µs  ({min(got):.3f}–{max(got):.3f})")


if __name__ == "__main__":
    main()
