"""Issue 29: what replay.launch_key costs (a launch through FAST_LAUNCHES: the key of what its compiled kernel depends
on, its arguments bound), fused's bf16 64×4000 launch as fused.launch makes it; µs a call, the median of 7 rounds of
2000 (the thirty-eighth session's plan-build-cost.py's timer). CPU.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session39/launch-key-cost.py
"""

import runpy
from pathlib import Path

from softmax_bench import replay

SESSION38 = Path(__file__).parents[1] / "2026-12-05-session38" / "plan-build-cost.py"
built = runpy.run_path(str(SESSION38))  # its rows too
x, median_us = built["x"], built["median_us"]
kernel, grid, values, kwargs = built["glue"].recorded_launch(x)  # every argument bound, in the kernel's order
options = {name: value for name, value in kwargs.items() if name not in replay._parameters(kernel)[3]}  # num_warps
args = tuple(values)
print(f"{'launch_key (fused, bf16 64x4000)':<59} {median_us(lambda: replay.launch_key(kernel, grid, args, options, 0)):8.2f} µs")
