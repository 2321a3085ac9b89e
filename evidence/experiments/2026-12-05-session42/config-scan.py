"""The cluster forward kernel compiled for sm_90 without a GPU (tests.compile_sm90) in 16 CTAs of 4, 8 and 16 warps,
uncapped and capped, for the forward cells under 92 % of their roofline: registers, spills, CTAs an SM, SASS a thread
and the loads' waves (load_waves). `PYTHONPATH=. python3 evidence/experiments/2026-12-05-session42/config-scan.py`
(writes its PTX under /tmp/cb/scan); output: config-scan.txt."""
import json
import os
from tests.compile_sm90 import compile_in_subprocess, sass_of, sass_instructions, load_waves
out = "/tmp/cb/scan"
os.makedirs(out, exist_ok=True)
cells = [dict(dtype="bf16", N=262144, bias=True), dict(dtype="bf16", N=262144, bias=True, log=True),
         dict(dtype="fp32", N=262144, causal=True), dict(dtype="fp32", N=262144, causal=True, log=True),
         dict(dtype="bf16", N=151936, causal=True)]
cases = []
for cell in cells:
    cases.append({"kernel": "forward", **cell})  # as the launch sets it
    for warps in (4, 8, 16):
        for cap in (None, 64, 80, 96, 104, 112, 128, 168):
            if cap is not None and cap > 65536 // (32 * warps):
                continue
            cases.append({"kernel": "forward", **cell, "ctas": 16, "warps": warps, "max_registers": cap})
res = compile_in_subprocess(cases, out)
for c, r in zip(cases, res):
    sass = sass_of(c, out)
    regs = r["registers"]; warps = r["warps"]
    per_sm = min(65536 // (32 * warps * ((regs + 7) // 8 * 8)), 228 * 1024 // max(r["shared_bytes"], 1), 32 // warps * 2)
    print(json.dumps({k: c.get(k) for k in ("dtype", "N", "bias", "causal", "log", "warps", "max_registers")}),
          "ctas", r["ctas"], "w", warps, "regs", regs, "spill", r["spill_bytes"], "per_sm", per_sm,
          "instr", len(sass_instructions(sass)), "waves", load_waves(sass)[:6], flush=True)
