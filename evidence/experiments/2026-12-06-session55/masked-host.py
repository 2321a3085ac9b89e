"""Issue 29: where a scaled-masked call's host time goes beyond a plain one's, on a machine with no GPU (every launch
to the thirty-sixth session's CUDA driver that does nothing; the forty-second session's cxx-replayed.py set-up, all
C++: replayed.cpp's look-up, empty_like and address_of). The masked plan launches the plain kernel with the mask's
address in no slot, so the rows differ only in what the call, the key and the Replay do with a mask and a scale.

    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session55/masked-host.py OUT.csv [--rounds 9 --calls 20000]

Rows (µs a call, median of the rounds, every row timed in turn each round), each a lambda as a user writes the call:
softmax(x) and softmax(x, scale=0.5, mask=mask); replayed.cpp's replayed alone, plain and masked (a hit: the key,
the look-up and the Replay); the key alone (a miss); the Replay alone, with and without the mask.
"""

import argparse
import csv
import importlib.util
import statistics
import sys
import tempfile
import time
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
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    where = tempfile.mkdtemp()
    module = launcher.driver_bound(glue.fake_driver(where))
    cxx = replay.cxx_built()
    cxx.configure(replay.PLANS, replay.FUSED_CASTS)
    replay.replayed = cxx.replayed
    module.configure(cxx.empty_like, torch.contiguous_format, replay._runtime_knobs(), cxx.address_of)

    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    compiled, grid, _, template, slots, _ = glue.compiled_launch(x, y, where)
    own_launch = launcher.make_launch(compiled, grid, template, slots, 0)
    plan_triton = replay.Plan([(replay.launcher(compiled, grid), template, slots)], abs, 0, x.dtype, like_x=True)
    replay_plan = module.Replay((own_launch,), plan_triton, abs, 0, None)
    mask = torch.rand(64, 4000) > 0.5
    replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto")] = replay_plan
    replay.PLANS[replay.plan_key(x, -1, 0.5, mask, False, "auto")] = replay_plan
    wide = torch.empty(64, 4008, dtype=torch.bfloat16)  # a kind with no plan
    r, softmax = cxx.replayed, softmax_bench.softmax
    rows = {
        "softmax(x)": lambda: softmax(x),
        "softmax(x, scale=0.5, mask=mask)": lambda: softmax(x, scale=0.5, mask=mask),
        "replayed, plain (hit)": lambda: r(x, -1, None, None, None, False, "auto", False, None),
        "replayed, scale and mask (hit)": lambda: r(x, -1, None, 0.5, mask, False, "auto", False, None),
        "key and look-up, plain (miss)": lambda: r(wide, -1, None, None, None, False, "auto", False, None),
        "key and look-up, scale and mask (miss)": lambda: r(wide, -1, None, 0.5, mask, False, "auto", False, None),
        "Replay, plain": lambda: replay_plan(x, None, None),
        "Replay, with the mask": lambda: replay_plan(x, mask, None),
        "nothing (a lambda)": lambda: None,
    }
    assert rows["softmax(x, scale=0.5, mask=mask)"]() is not None
    times = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, call in rows.items():
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
            print(f"{name:44s} {statistics.median(got):7.3f} µs  ({min(got):.3f}–{max(got):.3f})")


if __name__ == "__main__":
    main()
