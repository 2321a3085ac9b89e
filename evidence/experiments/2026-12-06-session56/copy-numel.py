"""copy-odd-sizes.py found torch's copy_ of ~48 MB some 20 % slower where the tensors' element count was not a
multiple of 2048 (12,193,000, 12,192,768, 12,500,000 bf16 elements) than where it was: torch's same-dtype
contiguous copy_ is the driver's device-to-device memcpy. Here, in one process, copies of k · 2048 elements and of
k · 2048 + d (d = 1, 8, 64, 1024) at three sizes, torch's copy_ beside a Triton copy kernel of the same tensors, each
the median of 3 timings (L2 cleared before every call, as the sweep's timer does).
    PYTHONPATH=. python3 evidence/experiments/2026-12-06-session56/copy-numel.py [d ...]
Written in the fifty-sixth session."""
import sys

import torch
import triton
import triton.language as tl

from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=40)


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offsets, tl.load(src + offsets, mask=offsets < n), mask=offsets < n)


print(torch.cuda.get_device_name(), flush=True)
for base_mib in (8, 24, 128):
    k = base_mib * 2**20 // 2 // 2048  # bf16 elements / 2048
    for extra in [int(d) for d in sys.argv[1:]] or (0, 1, 8, 64, 1024):
        numel = k * 2048 + extra
        src = torch.randn(numel, device="cuda").to(torch.bfloat16)
        dst = torch.empty_like(src)
        torch_ms = sorted(measure(lambda: dst.copy_(src), SETTINGS, interpret=False).ms for _ in range(3))[1]
        grid = (triton.cdiv(numel, 8192),)
        triton_ms = sorted(measure(lambda: copy_kernel[grid](src, dst, numel, BLOCK=8192, num_warps=8), SETTINGS,
                                   interpret=False).ms for _ in range(3))[1]
        assert torch.equal(src, dst)
        nbytes = 2 * src.nbytes
        print(f"{numel:11,} elements (2048 · {k} + {extra:4}), {nbytes / 2**20:7.2f} MiB moved: torch copy_ "
              f"{torch_ms * 1e3:7.2f} us ({nbytes / torch_ms / 1e6:5.0f} GB/s), Triton {triton_ms * 1e3:7.2f} us "
              f"({nbytes / triton_ms / 1e6:5.0f} GB/s)", flush=True)
        del src, dst
