"""masking.phase_copies_kernel's BLOCK and num_warps, timed with the project's timer (L2 clean before each call) on
the phase copies of the H100 cells under the bar: key-padded's mask (128 rows of 50257 bytes, 8 copies each) and
biased rows/64's bf16 bias (128 rows of 50257), and fp32 key-padded's mask (4 copies). The committed launch is
BLOCK 4096, 4 warps.

    python3 copies-scan.py
"""

import torch
import triton

from softmax_bench.kernels.masking import phase_copies_kernel
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=25, rep_ms=100, l2="clean")
for name, dtype, vec in (("mask u8, vec 8", torch.uint8, 8), ("bias bf16, vec 8", torch.bfloat16, 8),
                         ("mask u8, vec 4", torch.uint8, 4)):
    rows = (torch.rand(128, 50257, device="cuda") < 0.9).to(dtype)
    G, N = rows.shape
    L = -(-(N + vec) // 16) * 16
    copies = torch.empty(G * vec, L, dtype=dtype, device="cuda")
    moved = (copies.numel() + rows.numel()) * rows.element_size()
    results = []
    for block in (1024, 2048, 4096, 8192):
        for warps in (2, 4, 8, 16):
            if block // (warps * 32) < 4:
                continue
            def call(block=block, warps=warps):
                phase_copies_kernel[(G * vec, triton.cdiv(L, block))](rows, copies, N, rows.stride(0), rows.stride(1),
                                                                      L, VEC=vec, BLOCK=block, num_warps=warps)
            call()
            expected = torch.zeros_like(copies).view(G, vec, L)
            for j in range(vec):
                expected[:, j, j:j + N] = rows
            assert torch.equal(copies.view(G, vec, L), expected), (name, block, warps)
            t = measure(call, SETTINGS, False)
            results.append((t.ms, block, warps))
    print(f"{name}: {moved / 1e6:.1f} MB moved (copies written, rows read once)")
    for ms, block, warps in sorted(results):
        print(f"  BLOCK {block:5} warps {warps:2}: {1000 * ms:6.1f} µs  {moved / ms / 1e6:7.0f} GB/s")
