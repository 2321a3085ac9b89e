"""Issue 29: what replay.launch_key costs (a launch through FAST_LAUNCHES: the key of what its compiled kernel depends
on, its arguments bound), fused's bf16 64×4000 launch as fused.launch makes it; µs a call, the median of 7 rounds of
2000 (the thirty-eighth session's plan-build-cost.py's timer). CPU.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session39/launch-key-cost.py
"""

import runpy
from pathlib import Path

from softmax_bench import replay
from softmax_bench.kernels import fused

SESSION38 = Path(__file__).parents[1] / "2026-12-05-session38" / "plan-build-cost.py"
built = runpy.run_path(str(SESSION38))  # its rows too
x, median_us = built["x"], built["median_us"]
got = []
real = fused.launch_kernel
fused.launch_kernel = lambda kernel, grid, *args, **kwargs: got.append((kernel, grid, args, kwargs))
try:
    fused.launch(x)
finally:
    fused.launch_kernel = real
kernel, grid, args, kwargs = got[0]
print(f"{'launch_key (fused, bf16 64x4000)':<59} {median_us(lambda: replay.launch_key(kernel, grid, args, kwargs, 0)):8.2f} µs")
