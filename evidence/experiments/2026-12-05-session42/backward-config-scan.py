"""The cluster backward kernel compiled for sm_90 without a GPU (tests.compile_sm90) at fp32 262144, the width where
every backward form is under 90 % of its roofline: in 16 CTAs of 8 and 16 warps (and 8 CTAs of 16), STAGED on and
off, uncapped and capped; registers, spills, shared memory, CTAs an SM, SASS a thread and the loads' waves.
`PYTHONPATH=. python3 evidence/experiments/2026-12-05-session42/backward-config-scan.py` (PTX under
/tmp/cb/bscan); output: backward-config-scan.txt."""
import json
import os

from tests.compile_sm90 import compile_in_subprocess, load_waves, sass_instructions, sass_of

out = "/tmp/cb/bscan"
os.makedirs(out, exist_ok=True)
cases = []
for form in ({}, {"scale": 0.5, "mask": True}, {"log": True}):
    cases.append({"kernel": "backward", "dtype": "fp32", "N": 262144, **form})  # as the launch sets it
    for ctas, warps in ((16, 8), (16, 16), (8, 16)):
        for staged in (True, False):
            for cap in (None, 64, 80, 96, 128):
                if cap is not None and cap > 65536 // (32 * warps):
                    continue
                cases.append({"kernel": "backward", "dtype": "fp32", "N": 262144, **form, "ctas": ctas,
                              "warps": warps, "staged": staged, "max_registers": cap})
for c, r in zip(cases, compile_in_subprocess(cases, out)):
    sass = sass_of(c, out)
    regs, warps = r["registers"], r["warps"]
    per_sm = min(65536 // (32 * warps * ((regs + 7) // 8 * 8)), 228 * 1024 // max(r["shared_bytes"], 1), 64 // warps)
    print(json.dumps({k: c.get(k) for k in ("scale", "mask", "log", "staged", "max_registers")}), "ctas", r["ctas"],
          "w", warps, "regs", regs, "spill", r["spill_bytes"], "shared", r["shared_bytes"], "per_sm", per_sm,
          "instr", len(sass_instructions(sass)), "waves", load_waves(sass)[:6], flush=True)
