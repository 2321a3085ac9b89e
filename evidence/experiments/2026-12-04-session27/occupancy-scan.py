"""Every cluster cell of the default grid (and the wide rows) by form: config_for's registers, CTAs an SM, load
waves; then capped at the next CTA an SM: spills and waves (compiled for sm_90 on CPU)."""
import pathlib, tempfile, json, sys
from tests.compile_sm90 import compile_in_subprocess, load_waves, sass_of

def ctas_per_sm(regs, warps):
    return min(65536 // (((regs + 7) // 8 * 8) * 32 * warps), 64 // warps, 32)

tmp = pathlib.Path(tempfile.mkdtemp())
forms = {"plain": {}, "scaled": {"scale": 0.125}, "causal": {"causal": True}, "masked": {"scale": 0.125, "mask": True},
         "biased": {"scale": 0.125, "bias": True}}
widths = [16384, 32768, 50257, 65536, 128256, 131072, 151936, 196608, 262144]
base = [{"kernel": "forward", "dtype": d, "N": N, **extra, "form": f} for f, extra in forms.items()
        for d in ("bf16", "fp32") for N in widths]
clean = [{k: v for k, v in c.items() if k != "form"} for c in base]
first = compile_in_subprocess(clean, tmp)
out = open(sys.argv[1], "w")
capped = []
for case, c, form in zip(clean, first, [b["form"] for b in base]):
    regs, warps = c["registers"], c["warps"]
    n = ctas_per_sm(regs, warps)
    rec = {"form": form, "dtype": case["dtype"], "N": case["N"], "ctas": c["ctas"], "warps": warps, "regs": regs,
           "spill": c["spill_bytes"], "per_sm": n, "waves": load_waves(sass_of(case, tmp))}
    out.write(json.dumps(rec) + "\n"); out.flush()
    cap = (65536 // ((n + 1) * warps * 32)) // 8 * 8
    if cap >= 32 and n + 1 <= 64 // warps and cap < regs:
        capped.append(({**case, "max_registers": cap}, form))
for (case, form), c in zip(capped, compile_in_subprocess([c for c, _ in capped], tmp)):
    rec = {"form": form, "dtype": case["dtype"], "N": case["N"], "cap": case["max_registers"], "regs": c["registers"],
           "spill": c["spill_bytes"], "per_sm": ctas_per_sm(c["registers"], c["warps"]),
           "waves": load_waves(sass_of(case, tmp))}
    out.write(json.dumps(rec) + "\n"); out.flush()
