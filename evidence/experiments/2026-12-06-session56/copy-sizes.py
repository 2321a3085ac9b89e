"""How a copy's time grows with its bytes on this GPU (the sweep's timer: L2 cleared before every call), and what
that means for a fused cell whose modelled bytes are fewer than the copy its roofline is priced by (a causal
square's: its kept columns read, y written whole). The sweep prices a cell's bytes at the bandwidth of a copy of
x and y (sweep.copy_timing: 2·M·N elements, the fastest of 5 trials below 256 MB); a kernel that moves fewer bytes
pays the same fixed cost of a launch and its ramp, so the roofline prorated from the larger copy is shorter than a
copy of the cell's own bytes takes. Timed here in one process: copies from 8 MB to 1 GB (t = t0 + bytes / B fitted),
and at causal bf16 4096×4000 the auto kernel against the prorated copy and against a copy of its modelled bytes.

    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/copy-sizes.py
Written in the fifty-sixth session."""
import torch

import softmax_bench
from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=50)


def copy_ms(nbytes: int) -> float:
    """The fastest median of 5 copies of nbytes in all (half read, half written), each from fresh buffers."""
    best = float("inf")
    for _ in range(5):
        src = torch.randn(nbytes // 4, device="cuda").to(torch.bfloat16)
        dst = torch.empty_like(src)
        best = min(best, measure(lambda: dst.copy_(src), SETTINGS, interpret=False).ms)
        del src, dst
    return best


print(torch.cuda.get_device_name(), flush=True)
sizes = [8, 16, 32, 48, 64, 96, 128, 256, 512, 1024]
times = []
for mb in sizes:
    t = copy_ms(mb * 2**20)
    times.append(t)
    print(f"copy of {mb:5} MiB: {t * 1e3:8.2f} us, {mb * 2**20 / t / 1e6:6.0f} GB/s", flush=True)
big = [(s * 2**20, t) for s, t in zip(sizes, times) if s >= 128]
slope = (big[-1][1] - big[0][1]) / (big[-1][0] - big[0][0])
t0 = big[0][1] - slope * big[0][0]
print(f"fit over >= 128 MiB: t0 = {t0 * 1e3:.2f} us, {1 / slope / 1e6:.0f} GB/s", flush=True)
M, N = 4096, 4000
x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda") * 3
for log in (False, True):
    fusion = ops.get_op("causal").fusion_for(x, log=log)
    model = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
    call = (lambda: softmax_bench.log_softmax(x, causal=True, scale=0.125)) if log else \
        (lambda: softmax_bench.softmax(x, causal=True, scale=0.125))
    kernel = sorted(measure(call, SETTINGS, interpret=False).ms for _ in range(5))[2]
    whole = copy_ms(2 * x.nbytes)
    own = copy_ms(model)
    print(f"causal bf16 {M}x{N}{' log' if log else ''}: {kernel * 1e3:.2f} us; modelled {model / 1e6:.1f} MB; "
          f"copy of x and y ({2 * x.nbytes / 1e6:.1f} MB) {whole * 1e3:.2f} us, prorated {whole * model / (2 * x.nbytes) * 1e3:.2f} us: "
          f"{100 * whole * model / (2 * x.nbytes) / kernel:.1f} % of that roofline; a copy of the modelled bytes "
          f"{own * 1e3:.2f} us: {100 * own / kernel:.1f} %", flush=True)
