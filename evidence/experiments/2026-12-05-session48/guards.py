"""How many guards dynamo checks before each call of compiled_op and of torch_compile (softmax_bench.peers), and
what one check of them costs on this host: the compiled function's cache entry (torch._dynamo.eval_frame.
_debug_get_cache_entry_list), its guard manager checked 20,000 times on the frame's locals. A plain softmax of 8×64
on the CPU (the guards come from tracing, whatever the device).

    TRITON_INTERPRET=1 python3 evidence/experiments/2026-12-05-session48/guards.py
"""

import gc
import time

import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list

from softmax_bench import ops, peers

x = torch.randn(8, 64)
fusion = ops.OPS["softmax"].fusion_for(x)
for name in ("torch_compile", "compiled_op"):
    compiled = peers.PEERS[name].make(fusion)
    compiled(x)
    for fn in gc.get_objects():  # the function torch.compile wrapped: compiled_op's `model`, torch_compile's lambda
        code = getattr(fn, "__code__", None) if callable(fn) else None
        if getattr(code, "co_name", None) in ("model", "<lambda>") and (entries := _debug_get_cache_entry_list(code)):
            break
    guards = entries[0].guard_manager
    frame_locals = {"x": x, **dict(zip(code.co_freevars, [c.cell_contents for c in fn.__closure__ or ()]))}
    if name == "compiled_op":
        frame_locals.update(mask=None, bias=None)
    assert guards.check(frame_locals), name
    start = time.perf_counter()
    for _ in range(20000):
        guards.check(frame_locals)
    print(f"{name}: {str(guards).count(chr(10))} guard lines, {(time.perf_counter() - start) / 20000 * 1e6:.2f} µs a check")
    torch._dynamo.reset()
