"""Issue 29: what building a recorded call's Replay costs the host (a call of a new kind pays it every time: the
"a new width a call" rows of host-cost.py measured auto 151.7 µs with Triton's launch, 181.7 with the launcher's,
on the H200). Timed on a machine with no GPU against the thirty-sixth session's do-nothing CUDA driver, fused's
bf16 64×4000 launch as replayed-glue.py sets it up: µs a call, the median of 7 rounds.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session38/plan-build-cost.py
"""

import importlib.util
import tempfile
import time
from pathlib import Path

import torch

from softmax_bench import launcher, replay

SESSION36 = Path(__file__).parents[1] / "2026-12-04-session36" / "launch-glue.py"
spec = importlib.util.spec_from_file_location("launch_glue", SESSION36)
glue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glue)


def median_us(fn, calls: int = 2000, rounds: int = 7) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls * 1e6)
    return sorted(times)[rounds // 2]


where = tempfile.mkdtemp()
module = launcher.driver_bound(glue.fake_driver(where))
x = torch.randn(64, 4000, dtype=torch.bfloat16)
y = torch.empty_like(x)
compiled, grid, _, template, slots, _ = glue.compiled_launch(x, y, where)
ptx, name = compiled.asm["ptx"], compiled.metadata.name
print(f"fused's PTX: {len(ptx)} characters")
print(f"ptx_parameters (the .entry's parameters read from the PTX): {median_us(lambda: launcher.ptx_parameters(ptx, name)):8.2f} µs")
print(f"make_launch (packed, checked, a Launch):                    "
      f"{median_us(lambda: launcher.make_launch(compiled, grid, template, slots, 0)):8.2f} µs")
plan = replay.Plan([(replay.launcher(compiled, grid), template, slots)], abs, 0, x.dtype, like_x=True)
own = launcher.make_launch(compiled, grid, template, slots, 0)
print(f"launcher.Replay((launch,), plan, ...):                      "
      f"{median_us(lambda: module.Replay((own,), plan, abs, 0, None)):8.2f} µs")
