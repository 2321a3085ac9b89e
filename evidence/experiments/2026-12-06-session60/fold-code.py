"""What a compiled softmax_bench.softmax(t * 0.125) launches, with the fold on and off: the launches in inductor's
output code, and the kernels one call runs on the GPU (torch.profiler). bf16 16384x8192 and 64x4000. Since
d33066b also softmax(t.masked_fill(~keep, -inf)), on and off, and softmax(t + 1) (its add writes t + 1 once since
84cccc8: one output buffer, not two).

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-06-session60/fold-code.py
"""

import contextlib

import torch
from torch._inductor import config
from torch._inductor.utils import run_and_get_code
from torch.profiler import ProfilerActivity, profile

import softmax_bench

MODELS = {  # (since d33066b) the masked_fill folded too, and x + 1 (never folded: inductor's add, then ours)
    "softmax(t * 0.125)": lambda t, keep: softmax_bench.softmax(t * 0.125),
    "softmax(t.masked_fill(~keep, -inf))": lambda t, keep: softmax_bench.softmax(t.masked_fill(~keep, float("-inf"))),
    "softmax(t.float())": lambda t, keep: softmax_bench.softmax(t.float()),  # (since 11c7f3b)
    "softmax(t + 1)": lambda t, keep: softmax_bench.softmax(t + 1.0),
}
for shape in ((16384, 8192), (64, 4000)):
    t = torch.randn(*shape, device="cuda", dtype=torch.bfloat16)
    keep = torch.rand(shape[-1], device="cuda") > 0.2
    torch.compile(lambda t: softmax_bench.softmax(t, scale=0.5), fullgraph=True)(t)  # installs the pass
    for (name, fn), off in [(item, off) for item in MODELS.items() for off in (False, True)]:
        if off and name == "softmax(t + 1)":
            continue
        torch._dynamo.reset()
        model = torch.compile(lambda t, fn=fn: fn(t, keep), fullgraph=True)
        with config.patch(pre_grad_custom_pass=None) if off else contextlib.nullcontext():
            _, code = run_and_get_code(model, t)
        print(shape, name, "fold off" if off else "fold on", "pass:", type(config.pre_grad_custom_pass).__name__)
        for line in code[0].splitlines():
            if ".run(" in line or "softmax_bench" in line and "Original ATen" in line or "extern_kernels" in line:
                print("   ", line.strip()[:170])
        model(t)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            model(t)
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        for e in kernels:
            print(f"    GPU: {e.name[:90]} {e.device_time:.1f} us")
