import pathlib, tempfile, json, sys
from tests.compile_sm90 import compile_in_subprocess, load_waves, sass_of
def ctas_per_sm(regs, warps):
    return min(65536 // (((regs + 7) // 8 * 8) * 32 * warps), 64 // warps, 32)
tmp = pathlib.Path(tempfile.mkdtemp())
forms = {"plain": {}, "scaled": {"scale": 0.125}, "causal": {"causal": True}, "masked": {"scale": 0.125, "mask": True}}
widths = [50257, 128256, 151936, 196608, 262144]
base = [({"kernel": "backward", "dtype": d, "N": N, **extra}, f) for f, extra in forms.items() for d in ("bf16", "fp32") for N in widths]
first = compile_in_subprocess([c for c, _ in base], tmp)
capped = []
for (case, form), c in zip(base, first):
    regs, warps = c["registers"], c["warps"]; n = ctas_per_sm(regs, warps)
    print(form, case["dtype"], case["N"], f'{c["ctas"]}x{warps}', "regs", regs, "spill", c["spill_bytes"], "/SM", n, load_waves(sass_of(case, tmp)), flush=True)
    cap = (65536 // ((n + 1) * warps * 32)) // 8 * 8
    if cap >= 32 and n + 1 <= 64 // warps and cap < regs:
        capped.append(({**case, "max_registers": cap}, form))
for (case, form), c in zip(capped, compile_in_subprocess([c for c, _ in capped], tmp)):
    print("  capped", form, case["dtype"], case["N"], case["max_registers"], "regs", c["registers"], "spill", c["spill_bytes"], "/SM", ctas_per_sm(c["registers"], c["warps"]), load_waves(sass_of(case, tmp)), flush=True)
