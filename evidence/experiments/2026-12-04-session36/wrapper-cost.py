"""The Python of softmax_bench.softmax before a replayed call's plan, timed on a CPU: a plan that does nothing is
kept as the plan of a bf16 64×4000 CPU x's call, so that softmax_bench.softmax(x) times the wrapper alone (its
argument handling, the plan's key and its look-up).

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session36/wrapper-cost.py [--rounds 7 --calls 200000]

µs a call, the best of the rounds (timeit)."""

import argparse
import timeit

import torch

import softmax_bench
from softmax_bench import dispatch, replay


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200000)
    args = parser.parse_args()
    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto")] = lambda x, mask, bias: x
    rows = {"softmax_bench.softmax(x), a plan that does nothing": lambda: softmax_bench.softmax(x),
            "replay.plan_key": lambda: replay.plan_key(x, -1, None, None, False, "auto", False, None, None),
            "torch.compiler.is_compiling()": torch.compiler.is_compiling}
    if hasattr(dispatch, "recorded_plan"):  # the thirty-sixth session's
        rows["dispatch.recorded_plan"] = lambda: dispatch.recorded_plan(x, -1, None, None, None, False, "auto", False,
                                                                        None)
    for name, call in rows.items():
        best = min(timeit.repeat(call, number=args.calls, repeat=args.rounds)) / args.calls * 1e6
        print(f"{name:55s} {best:.3f} µs")


if __name__ == "__main__":
    main()
