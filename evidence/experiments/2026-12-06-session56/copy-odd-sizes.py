"""copy-sizes.py found a copy of causal bf16 4096×4000's modelled bytes (48,772,000) at 19.7 µs on the H100, where
one of 48 MiB took 16.6: copies of sizes near it, in two passes, each the fastest median of 5 from fresh buffers.
    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/copy-odd-sizes.py
Written in the fifty-sixth session."""

import torch

SIZES = [48 * 2**20, 48_772_000, 46 * 2**20, 47 * 2**20, 48_772_000 // 2**20 * 2**20, 48_771_072, 50_000_000,
         49_152_000, 65_536_000]


def copy_ms(nbytes: int, dtype=torch.bfloat16) -> float:
    from softmax_bench.timing import TimingSettings, measure
    best = float("inf")
    for _ in range(5):
        src = torch.randn(nbytes // 2 // dtype.itemsize, device="cuda").to(dtype)
        dst = torch.empty_like(src)
        best = min(best, measure(lambda: dst.copy_(src), TimingSettings(warmup_ms=10, rep_ms=50), interpret=False).ms)
        del src, dst
    return best


print(torch.cuda.get_device_name(), flush=True)
for rnd in range(2):
    for nbytes in SIZES:
        t = copy_ms(nbytes)
        print(f"pass {rnd}: {nbytes:11,} B ({nbytes / 2**20:7.2f} MiB, {nbytes // 4 % 1024:4} elements past 1024s): "
              f"{t * 1e3:7.2f} us, {nbytes / t / 1e6:5.0f} GB/s", flush=True)
