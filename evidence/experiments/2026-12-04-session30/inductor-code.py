"""The Triton kernel torch.compile writes for the scaled softmax and the plain one of fp32 rows of 8192 (the
torch_compile peer's eager code), printed by TORCH_LOGS=output_code: why its scaled kernel runs at 102 % of a copy
and its plain one at 87 % (wide-fp32-configs.py).

    TORCH_LOGS=output_code python3 evidence/experiments/2026-12-04-session30/inductor-code.py 2> code.txt
"""
import torch

from softmax_bench import ops
from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS

x = torch.randn(16384, 8192, device="cuda")
for op in ("scaled", "softmax"):
    fusion = ops.get_op(op).fusion_for(x) if op != "softmax" else PLAIN
    print(f"===== {op}", flush=True)
    PEERS["torch_compile"].make(fusion)(x)
    torch.cuda.synchronize()
