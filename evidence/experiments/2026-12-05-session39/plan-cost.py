"""Issue 29: what making a recorded call's plan costs the host (a call of a new kind pays it: replay.make_plan, with
the launcher's Replay and without), on a machine with no GPU, against the thirty-sixth session's do-nothing CUDA
driver; fused's bf16 64×4000 launch as the thirty-eighth session's plan-build-cost.py sets it up. µs a call, the
median of 7 rounds of 2000.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session39/plan-cost.py
"""

import runpy
from pathlib import Path
from types import SimpleNamespace

SESSION38 = Path(__file__).parents[1] / "2026-12-05-session38" / "plan-build-cost.py"
built = runpy.run_path(str(SESSION38))  # prints its own rows: ptx_parameters, make_launch, Replay
replay, median_us, glue = built["replay"], built["median_us"], built["glue"]
x, compiled, grid = built["x"], built["compiled"], built["grid"]
kernel, _, values, _ = glue.recorded_launch(x)
y = values[1]  # the output fused.launch allocated: the launch's y
launches = [(kernel, grid, tuple(values), {}, compiled)]
assert replay.make_plan(launches, x, y, None, x, None, stream_of=abs) is not None
for own in (False, True):
    replay.OWN_LAUNCHER = own
    label = "make_plan, a launcher.Replay" if own else "make_plan, a Plan (no own launcher)"
    print(f"{label:<59} {median_us(lambda: replay.make_plan(launches, x, y, None, x, None, stream_of=abs)):8.2f} µs")
print(f"{'bound_arguments':<59} {median_us(lambda: replay.bound_arguments(kernel, tuple(values), {})):8.2f} µs")
print(f"{'replay.launcher (Triton launch closure)':<59} {median_us(lambda: replay.launcher(compiled, grid)):8.2f} µs")
