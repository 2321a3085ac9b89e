# split the cross-entropy's time: kernel alone with and without the gradient, the library's forward, the step, the
# step without the synchronization that asks whether the loss's gradient is 1; fp32 wide rows per chunk
import os, sys, torch
import softmax_bench
lib = sys.modules["softmax_bench.cross_entropy"]
from softmax_bench.kernels import cross_entropy as kernel
from softmax_bench.timing import measure, TimingSettings
S = TimingSettings()
for shape in sys.argv[1:]:
    dt, M, V = shape.split(":"); M, V = int(M), int(V); dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dt]
    x = (torch.randn(M, V, device="cuda") * 3).to(dtype)
    t = torch.randint(0, V, (M,), device="cuda"); t[::7] = -100
    one = torch.ones(1, device="cuda")
    res = {}
    for name, g in (("kernel_nograd", None), ("kernel_grad", one)):
        res[name] = measure(lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, g), S, interpret=False).ms
    res["library_fwd"] = measure(lambda: softmax_bench.cross_entropy(x, t), S, interpret=False).ms
    shipped = kernel.launch_config
    if kernel.launch_config(V, dtype, True)["ON_CHIP"]:
        kernel.launch_config = lambda V, d, g: shipped(V, d, False)
        res["kernel_grad_chunks"] = measure(lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, one), S, interpret=False).ms
    elif dtype == torch.float32:
        for block in (2048, 4096):
            kernel.launch_config = lambda V, d, g, b=block: {"BLOCK": b, "num_warps": 8, "PER_LANE": False, "ON_CHIP": False}
            res[f"kernel_grad_per_chunk_{block}"] = measure(lambda: kernel.launch(x, t, None, -100, 0.0, 0.0, None, one), S, interpret=False).ms
    kernel.launch_config = shipped
    def step():
        xs = x.detach().requires_grad_()
        softmax_bench.cross_entropy(xs, t).backward()
    res["step"] = measure(step, S, interpret=False).ms
    real = lib._unit
    lib._unit = lambda d: True
    res["step_nosync"] = measure(step, S, interpret=False).ms
    lib._unit = real
    print(shape, " ".join(f"{k}={v:.3f}" for k, v in res.items()), flush=True)
