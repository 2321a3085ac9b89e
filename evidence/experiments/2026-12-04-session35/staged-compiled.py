"""cluster's backward compiled for sm_90 with and without STAGED (no GPU): registers, spills, shared memory a CTA,
vector loads and asynchronous copies, at the cells the thirty-fifth session's perf-notes table lists.
    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session35/staged-compiled.py OUT_DIR
"""
import sys

from tests.compile_sm90 import compile_in_subprocess

CELLS = [("fp32", 262144, False, False), ("fp32", 262144, True, True), ("fp32", 262144, True, False),
         ("fp32", 50257, True, True), ("fp32", 151936, True, True), ("fp32", 131072, False, False),
         ("bf16", 262144, False, False), ("bf16", 131072, True, True)]
cases = [{"kernel": "backward", "dtype": dtype, "N": N, "scale": 0.125, "log": log, "mask": mask, "staged": staged,
          **late_y} for dtype, N, log, mask in CELLS
         for staged, late_y in ((False, {}), (False, {"late_y": False}), (True, {"late_y": False}))]
for r in compile_in_subprocess(cases, sys.argv[1]):
    print(r["dtype"], r["N"], "log" if r["log"] else "softmax", "mask" if r["mask"] else "",
          "staged" if r["staged"] else "as is" + (" (LATE_Y off)" if "late_y" in r else ""),
          f"{r['ctas']}x{r['warps']}", "registers", r["registers"], "spilled", r["spill_bytes"], "shared",
          r["shared_bytes"], "loads_v4", r["loads_v4"], "async_copies", r["async_copies"], flush=True)
