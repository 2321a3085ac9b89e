"""Whether causal bf16 4096×4000's time (and a copy's of the same x into a y) moves with where x and y fall in
memory, as torch's copy_ of ~48 MB did by 20 % (copy-odd-sizes.py): x placed after a pad of k × 1 MiB (the caching
allocator freed and emptied between placements), y allocated by the call as a user's would be, the kernel's
median of 5 timings; the copy x → y of a preallocated y beside it.
    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/placement.py
Written in the fifty-sixth session."""
import torch

import softmax_bench
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=40)
print(torch.cuda.get_device_name(), flush=True)
for pad_mib in (0, 1, 2, 3, 5, 8, 13, 21):
    torch.cuda.empty_cache()
    pad = torch.empty(pad_mib * 2**20 + 1, dtype=torch.uint8, device="cuda") if pad_mib else None
    x = torch.randn(4096, 4000, dtype=torch.bfloat16, device="cuda") * 3
    y = torch.empty_like(x)
    call = lambda: softmax_bench.softmax(x, causal=True, scale=0.125)  # noqa: E731
    out = call()
    kernel = sorted(measure(call, SETTINGS, interpret=False).ms for _ in range(5))[2]
    copy = sorted(measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms for _ in range(5))[2]
    print(f"pad {pad_mib:2} MiB: x at +{(x.data_ptr() % 2**30) / 2**20:8.2f} MiB, y (the call's) at "
          f"+{(out.data_ptr() % 2**30) / 2**20:8.2f}: causal {kernel * 1e3:6.2f} us; copy x -> y {copy * 1e3:6.2f} us",
          flush=True)
    del pad, x, y, out
