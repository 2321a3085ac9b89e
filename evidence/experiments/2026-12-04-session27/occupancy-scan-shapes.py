import pathlib, tempfile, sys
from tests.compile_sm90 import compile_in_subprocess, load_waves, sass_of
def per_sm(regs, warps):
    return min(65536 // (((regs + 7) // 8 * 8) * 32 * warps), 64 // warps, 32)
tmp = pathlib.Path(tempfile.mkdtemp())
cells = [("bf16", 151936, {"causal": True}), ("bf16", 262144, {"causal": True}), ("fp32", 262144, {"causal": True, "scale": 0.125}),
         ("bf16", 262144, {"scale": 0.125, "bias": True})]
shapes = [(8, 4), (8, 8), (16, 4), (16, 8), (16, 16)]
base = [{"kernel": "forward", "dtype": d, "N": N, **extra, "ctas": c, "warps": w} for d, N, extra in cells for c, w in shapes]
res = compile_in_subprocess(base, tmp)
capped = []
for case, r in zip(base, res):
    n = per_sm(r["registers"], r["warps"])
    print(case["dtype"], case["N"], "bias" if case.get("bias") else "causal", f'{r["ctas"]}x{r["warps"]}', "regs", r["registers"], "spill", r["spill_bytes"], "/SM", n, "warps/SM", n * r["warps"], load_waves(sass_of(case, tmp)), flush=True)
    for k in (1, 2):
        cap = (65536 // ((n + k) * r["warps"] * 32)) // 8 * 8
        if cap >= 40 and (n + k) * r["warps"] <= 64 and cap < r["registers"]:
            capped.append({**case, "max_registers": cap})
for case, r in zip(capped, compile_in_subprocess(capped, tmp)):
    n = per_sm(r["registers"], r["warps"])
    print("  ", case["dtype"], case["N"], f'{r["ctas"]}x{r["warps"]}', "cap", case["max_registers"], "regs", r["registers"], "spill", r["spill_bytes"], "/SM", n, "warps/SM", n * r["warps"], load_waves(sass_of(case, tmp)), flush=True)
