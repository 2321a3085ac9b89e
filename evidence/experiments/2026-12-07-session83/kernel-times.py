"""Where a cell's auto call spends its time, kernel by kernel (torch.profiler's CUDA times): warm up, then CALLS
calls, each after L2 is cleared (256 MB written), as the sweep times them; the mean of each kernel a call.

    python3 kernel-times.py OP DTYPE M N [MASK_SHAPE [log]]     e.g.  key-padded bfloat16 8192 50257
"""

import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

from softmax_bench.ops import get_op, user_call

CALLS = 20
op, dtype, M, N = sys.argv[1], getattr(torch, sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
shape = sys.argv[5] if len(sys.argv) > 5 else "full"
x = torch.randn(M, N, dtype=dtype, device="cuda")
the_op = get_op(op)
fusion = the_op.fusion_for(x, shape if the_op.shaped else "full", log=len(sys.argv) > 6)
call = user_call(x, fusion, "auto")
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for _ in range(3):
    call()
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(CALLS):
        flush.zero_()
        call()
    torch.cuda.synchronize()
total = defaultdict(float)
count = defaultdict(int)
for event in prof.events():
    if event.device_type == torch.autograd.DeviceType.CUDA and "fill" not in event.name.lower() and "zero" not in event.name.lower():
        total[event.name] += event.device_time
        count[event.name] += 1
print(f"{op} {shape}{' log' if len(sys.argv) > 6 else ''} {sys.argv[2]} {M}x{N}: µs a call by kernel")
for name, us in sorted(total.items(), key=lambda item: -item[1]):
    print(f"  {us / CALLS:9.1f}  ({count[name] / CALLS:.0f} a call)  {name[:100]}")
