import pathlib, tempfile
from tests.compile_sm90 import compile_in_subprocess, sass_of
tmp = pathlib.Path(tempfile.mkdtemp())
base = {"kernel": "fused", "positive_scale": True}
cases = []
for d, N, c, caps in (("bf16", 8192, True, (48, 40)), ("bf16", 4000, True, (48,)), ("fp32", 8192, False, (48,)),
                      ("fp32", 8192, True, (56, 48)), ("bf16", 16384, False, (48,)), ("fp32", 16384, False, (48,))):
    for cap in (None, *caps):
        cases.append({**base, "dtype": d, "N": N, "causal": c, "skip": c, "causal_bits": c, **({"max_registers": cap} if cap else {})})
for case, r in zip(cases, compile_in_subprocess(cases, tmp)):
    print(case["dtype"], case["N"], "causal" if case["causal"] else "plain", case.get("max_registers"), "regs", r["registers"], "spill", r["spill_bytes"])
