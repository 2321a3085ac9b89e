"""cluster's forward compiled for sm_90 with the row held in registers and staged in shared memory (X_STAGED),
uncapped and capped: registers, spills, shared memory a CTA, vector loads and asynchronous copies.
    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session35/x-staged-compiled.py OUT_DIR
"""
import sys

from tests.compile_sm90 import compile_in_subprocess

CELLS = [("bf16", 151936, {"causal": True, "scale": 0.125}, 64), ("bf16", 151936, {"causal": True, "log": True}, 64),
         ("bf16", 262144, {"causal": True, "scale": 0.125}, 64), ("bf16", 262144, {"scale": 0.125}, 64),
         ("bf16", 131072, {"scale": 0.125}, 48), ("bf16", 50257, {}, 64), ("fp16", 128256, {"causal": True}, 64),
         ("fp32", 262144, {"causal": True, "scale": 0.125}, 80), ("fp32", 262144, {"causal": True, "scale": 0.125,
                                                                                  "log": True}, 80),
         ("fp32", 262144, {"scale": 0.125}, 64), ("bf16", 151936, {"causal": True, "scale": -0.5}, 80)]
cases = [{"kernel": "forward", "dtype": dtype, "N": N, **form, "x_staged": staged,
          **({"max_registers": cap} if capped else {})}
         for dtype, N, form, cap in CELLS for capped in (False, True) for staged in (False, True)]
for r in compile_in_subprocess(cases, sys.argv[1]):
    form = "+".join(k for k in ("causal", "log") if r.get(k)) + (f" scale {r['scale']}" if "scale" in r else "")
    print(r["dtype"], r["N"], form or "plain", "staged" if r["x_staged"] else "held",
          f"cap {r['max_registers']}" if "max_registers" in r else "uncapped", f"{r['ctas']}x{r['warps']}",
          "registers", r["registers"], "spilled", r["spill_bytes"], "shared", r["shared_bytes"], "loads_v4",
          r["loads_v4"], "async_copies", r["async_copies"], flush=True)
