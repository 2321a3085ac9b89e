"""The host cost of a replayed call with softmax_bench.launcher's whole plan in C (launcher.Replay, the
thirty-seventh session) against the Python replay around Triton's launch and around the
launcher's Launch (the thirty-sixth's), timed on a machine with no GPU: every launch goes to a CUDA driver that
does nothing (the thirty-sixth session's fake_libcuda.c), so what is timed is everything a call does but the
driver's own work.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session37/replayed-glue.py OUT.csv [--rounds 7 --calls 20000]

The launch is fused's for a bf16 64×4000 softmax, set up as the thirty-sixth session's launch-glue.py sets it up
(whose helpers this imports). The stream is asked of `abs` (a C function, as Triton's get_current_stream is:
torch._C._cuda_getCurrentRawStream). Rows, µs a call, the median of the rounds, each round timing every row in turn:
- plan, triton: replay.Plan (Python) with Triton's C launch;
- plan, own launch from Python: the same Plan's steps, each launched by a Launch from Python (the thirty-sixth
  session's Plan.own_steps, as launch-glue.py's own_launch_plan writes it out);
- plan, own (Replay): launcher.Replay, the whole plan in C;
- softmax_bench.softmax(x) as a user calls it, each served by one of these (found by replay.replayed).

replayed-glue-with-c-lookup.csv holds a run of this session's first version, which also looked the plan up in C
(launcher.replayed: the key built as replay.plan_key builds it): its rows "C replayed". That look-up was not kept
(docs/perf-notes.md, thirty-seventh session).
"""

import argparse
import importlib.util
import tempfile
from functools import partial
from pathlib import Path

import torch

import softmax_bench
from softmax_bench import launcher, replay

SESSION36 = Path(__file__).parents[1] / "2026-12-04-session36" / "launch-glue.py"
spec = importlib.util.spec_from_file_location("launch_glue", SESSION36)
glue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glue)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    where = tempfile.mkdtemp()
    module = launcher.driver_bound(glue.fake_driver(where))

    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    compiled, grid, _, template, slots, _ = glue.compiled_launch(x, y, where)
    own_launch = launcher.make_launch(compiled, grid, template, slots, 0)
    plan_triton = replay.Plan([(replay.launcher(compiled, grid), template, slots)], abs, 0, x.dtype, like_x=True)
    plan_own_from_python = glue.own_launch_plan(own_launch, True, abs)  # the thirty-sixth session's Plan
    module.configure(torch.empty_like, torch.contiguous_format, replay._runtime_knobs())
    plan_own = module.Replay((own_launch,), plan_triton, abs, 0, None)
    for variant, plan in (("fused", plan_triton), ("two_pass", plan_own_from_python), ("auto", plan_own)):
        replay.PLANS[replay.plan_key(x, -1, None, None, False, variant)] = plan

    rows = {
        "plan, triton": partial(plan_triton, x, None),
        "plan, own launch from python": partial(plan_own_from_python, x, None),
        "plan, own (Replay)": partial(plan_own, x, None),
        "torch.empty_like(x)": partial(torch.empty_like, x),
        "softmax_bench.softmax, python replayed, plan triton": partial(softmax_bench.softmax, x, variant="fused"),
        "softmax_bench.softmax, python replayed, plan own from python": partial(softmax_bench.softmax, x,
                                                                                 variant="two_pass"),
        "softmax_bench.softmax, python replayed, Replay": partial(softmax_bench.softmax, x, variant="auto"),
    }
    glue.time_rows(rows, args.rounds, args.calls, args.out, 60)

if __name__ == "__main__":
    main()
