"""Which cluster forward kernels of the default grid's widths take more registers, or spill, with evict_last loads
(kernels.FORWARD_EVICT)? On the H200 (evict-ab/), evict_last ran 1–4 points of a copy faster wherever the
registers stayed, and lost where they rose (bf16 causal 151936: 80 → 122 registers, 90.4 → 76.1 % of a copy) or
spilled (bf16 262144 plain and scaled under their cap of 96: 62 bytes, 96.0 → 90.8). Compiled for sm_90 on this
machine (tests.compile_sm90), each form × dtype × width with plain loads and with evict_last.

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session31/evict-scan.py OUT_DIR
"""
import os
import sys

from tests.compile_sm90 import compile_in_subprocess

WIDTHS = [16384, 32768, 50257, 65536, 128256, 131072, 151936, 262144]
FORMS = {"softmax": {}, "scaled": {"scale": 0.125}, "masked": {"scale": 0.125, "mask": True},
         "causal": {"scale": 0.125, "causal": True}, "biased": {"scale": 0.125, "bias": True}}
CASES = [{"kernel": "forward", "dtype": dtype, "N": N, **fields, **({"log": True} if log else {})}
         for log in (False, True) for dtype in ("bf16", "fp32") for fields in FORMS.values() for N in WIDTHS]
FORM_OF = {tuple(sorted(f)): name for name, f in FORMS.items()}


results = {}
for setting in ("", "evict_last"):
    out = os.path.join(sys.argv[1], setting or "plain")
    os.makedirs(out, exist_ok=True)
    results[setting] = compile_in_subprocess([{**case, "evict": setting} for case in CASES], out)
print(f"{'form':8} {'log':4} {'dtype':5} {'N':>7} {'plain':>12} {'evict_last':>12}")
for plain, evicting in zip(results[""], results["evict_last"]):
    form = FORM_OF[tuple(sorted(k for k in ("scale", "mask", "causal", "bias") if k in plain))]
    rose = "  <- rises" if (evicting["registers"], evicting["spill_bytes"]) > (plain["registers"], plain["spill_bytes"]) else ""
    print(f"{form:8} {str(plain.get('log', False)):4} {plain['dtype']:5} {plain['N']:>7} {plain['registers']:>5} r "
          f"{plain['spill_bytes']:>3} sp {evicting['registers']:>5} r {evicting['spill_bytes']:>3} sp{rose}", flush=True)
