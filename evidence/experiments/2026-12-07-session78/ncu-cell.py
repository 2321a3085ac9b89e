"""One sweep cell's auto call for Nsight Compute: warm up (compiles, autotune), then one call between
cudaProfilerStart/Stop, so `ncu --profile-from-start off` reads only that call's kernels.

    python3 ncu-cell.py OP DTYPE M N [MASK_SHAPE [log]]     e.g.  biased bfloat16 512 262144 rows/64
"""

import sys

import torch

from softmax_bench.ops import get_op, user_call

op, dtype, M, N = sys.argv[1], getattr(torch, sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
shape = sys.argv[5] if len(sys.argv) > 5 else "full"
x = torch.randn(M, N, dtype=dtype, device="cuda")
the_op = get_op(op)
fusion = the_op.fusion_for(x, shape if the_op.shaped else "full", log=len(sys.argv) > 6)
call = user_call(x, fusion, "auto")
for _ in range(3):
    call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
call()
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
