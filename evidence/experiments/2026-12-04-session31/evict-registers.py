"""Do evict_last loads (kernels.FORWARD_EVICT) change the registers or spills of the forward kernels' capped
configurations? An L2 evict_last load takes a cache policy (createpolicy) into a register, and the cells below run
under register caps measured with plain loads (cluster.REGISTERS, CAUSAL_REGISTERS, MEASURED's and BIASED's caps;
fused.CAUSAL_REGISTERS): a spill there would confound `next.sh evict-ab`. Compiled for sm_90 on this machine (no GPU:
tests.compile_sm90), each case with plain loads and with evict_last (the case's "evict").

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session31/evict-registers.py OUT_DIR
"""
import os
import sys

from tests.compile_sm90 import compile_in_subprocess

CASES = [
    {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "causal": True},
    {"kernel": "forward", "dtype": "bf16", "N": 151936, "scale": 0.125, "bias": True},
    {"kernel": "forward", "dtype": "bf16", "N": 32768, "scale": 0.125, "bias": True},
    {"kernel": "fused", "dtype": "bf16", "N": 4096, "causal": True},
    {"kernel": "fused", "dtype": "bf16", "N": 8192, "causal": True},
    {"kernel": "forward", "dtype": "bf16", "N": 262144, "scale": 0.125},
]
OLD_CASES = [
    {"kernel": "forward", "dtype": "bf16", "N": 262144},
    {"kernel": "forward", "dtype": "bf16", "N": 196608},
    {"kernel": "forward", "dtype": "bf16", "N": 151936},
    {"kernel": "forward", "dtype": "bf16", "N": 65536},
    {"kernel": "forward", "dtype": "fp32", "N": 262144},
    {"kernel": "forward", "dtype": "bf16", "N": 262144, "scale": 0.125},
    {"kernel": "forward", "dtype": "bf16", "N": 262144, "scale": 0.125, "causal": True},
    {"kernel": "forward", "dtype": "bf16", "N": 131072, "scale": 0.125, "causal": True},
    {"kernel": "forward", "dtype": "bf16", "N": 262144, "scale": 0.125, "mask": True},
    {"kernel": "forward", "dtype": "fp32", "N": 50257, "scale": 0.125, "bias": True},
    {"kernel": "forward", "dtype": "bf16", "N": 262144, "scale": 0.125, "bias": True},
    {"kernel": "fused", "dtype": "bf16", "N": 8192, "causal": True, "max_registers": 48},
    {"kernel": "fused", "dtype": "fp32", "N": 8192},
    {"kernel": "fused", "dtype": "fp32", "N": 16384},
]
results = {}
for setting in ("", "evict_last"):
    os.makedirs(os.path.join(sys.argv[1], setting or "plain"), exist_ok=True)
    results[setting] = compile_in_subprocess([{**case, "evict": setting} for case in CASES],
                                             os.path.join(sys.argv[1], setting or "plain"))
print(f"{'case':60} {'plain':>14} {'evict_last':>14}")
for plain, evicting in zip(results[""], results["evict_last"]):
    case = {k: v for k, v in plain.items() if k in ("kernel", "dtype", "N", "scale", "causal", "mask", "bias",
                                                    "max_registers")}
    print(f"{str(case):60} {plain['registers']:>5} r {plain['spill_bytes']:>4} sp {evicting['registers']:>5} r "
          f"{evicting['spill_bytes']:>4} sp")
