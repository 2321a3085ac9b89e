"""cluster's backward compiled for sm_90 at every cluster width of the default and wide grids, bf16 and fp32,
softmax, log_softmax and the masked log, as is (LATE_Y where LATE_Y_CELLS has the cell) and staged (LATE_Y off):
registers, spills, shared memory, and the CTAs an SM that those allow (the least of 64 K registers, allocated in
8s, 228 KB of shared memory a CTA plus ~1 KB, and 64 warps).
    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session35/staged-scan.py OUT_DIR > staged-scan.txt
"""
import math
import sys

from tests.compile_sm90 import compile_in_subprocess

cases = [{"kernel": "backward", "dtype": dtype, "N": N, "scale": 0.125, "log": log, "mask": mask, "staged": staged,
          **({"late_y": False} if staged else {})}
         for dtype in ("bf16", "fp32") for N in (16384, 32768, 50257, 65536, 128256, 131072, 151936, 262144)
         for log, mask in ((False, False), (True, False), (True, True)) for staged in (False, True)]


def per_sm(case: dict) -> int:
    threads = 32 * case["warps"]
    registers = math.ceil(case["registers"] / 8) * 8
    return min(65536 // (registers * threads), 228 * 1024 // (case["shared_bytes"] + 1024), 64 // case["warps"])


compiled = compile_in_subprocess(cases, sys.argv[1])
for held, staged in zip(compiled[::2], compiled[1::2]):
    form = ("log" if held["log"] else "softmax") + (" mask" if held["mask"] else "")
    print(f"{held['dtype']} {held['N']} {form} {held['ctas']}x{held['warps']}: registers {held['registers']} -> "
          f"{staged['registers']}, spilled {held['spill_bytes']} / {staged['spill_bytes']} bytes, staged shared "
          f"{round(staged['shared_bytes'] / 1024)} KB a CTA; CTAs an SM {per_sm(held)} -> {per_sm(staged)}")
