"""The cluster backward's log_softmax (and softmax) compiled for sm_90 without a GPU (tests.compile_sm90): SASS
instructions a thread, registers, spills and loads, as it is and with cluster_backward.LEAN_KEEP, LATE_Y and
LATE_Y_REGISTERS' cap (thirty-third session; docs/perf-notes.md, "Why the masked and causal log backwards are slow").

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session33/backward-compiled.py OUT_DIR
"""
import re
import sys

from tests.compile_sm90 import compile_in_subprocess, sass_instructions, sass_of

out = sys.argv[1]
base = {"kernel": "backward", "scale": 0.5}
cases = [{**base, "dtype": dtype, "N": N, "log": True, **keeps, "lean_keep": lean}
         for dtype in ("bf16", "fp32") for N in (16384, 32768, 131072, 262144)
         for keeps in ({}, {"causal": True}, {"mask": True}) for lean in ((False, True) if keeps else (False,))]
cases += [{**base, "dtype": dtype, "N": N, "log": log, "late_y": late}
          for dtype in ("bf16", "fp32") for N in (131072, 151936, 262144) for log in (False, True)
          for late in (False, True)]
cases += [{**base, "dtype": "fp32", "N": 262144, "log": log, "late_y": late, "max_registers": cap}
          for log in (False, True) for late in (False, True) for cap in (128, 96)]
for case, compiled in zip(cases, compile_in_subprocess(cases, out)):
    sass = sass_of(case, out)
    loads = {}
    for load in re.findall(r"LDG\.E[.\w]*", sass):
        loads[load] = loads.get(load, 0) + 1
    what = " ".join(f"{k}={v}" for k, v in case.items() if k not in base and k not in ("dtype", "N"))
    print(f"{case['dtype']} {case['N']:>6} {what:<50} {compiled['ctas']:>2} x {compiled['warps']} "
          f"registers {compiled['registers']:>3} spilled {compiled['spill_bytes']:>3} "
          f"instructions {len(sass_instructions(sass)):>4} {loads}", flush=True)
