"""Is 92 % of a causal cell's roofline reachable where the rows are short? The roofline (expected_ms) scales the
cell's copy of x and y by the bytes the causal kernel must move (the kept columns read, y written whole), so it
assumes a kernel's time proportional to its bytes. At bf16 4096×4000 the copy takes 17.9 µs, the model 13.3 µs,
fused's causal 17.7 µs (75 % of its roofline: causal-h200-n). This times, in the same process, on the cell's shape:
- copy: x into y (torch's copy_, what the sweep's copy baseline runs);
- floor: a kernel that moves exactly the model's bytes and computes nothing: each row's kept columns read, y
  written whole (kept columns copied, the rest 0), one row a program in 4 warps as fused's causal tile, or ROWS
  rows;
- fused: fused's causal kernel as auto launches it.
Prediction: the floor takes ≥ 15 µs at bf16 4096×4000 (a copy's fixed cost does not scale with bytes), so 92 % of
the linear roofline is out of reach there for any kernel; fused within 10 % of the floor. At 16384×8192 (fused 90.7
%), the floor at ≥ 95 % of the roofline, fused 5 % behind it.

    python3 causal-floor.py [MxN:dtype ...]     (default: 4096x4000:bf16 16384x8192:bf16 4096x4000:fp32)
"""
import sys

import torch
import triton
import triton.language as tl

from softmax_bench import ops
from softmax_bench.kernels import fused, one_pass_traffic
from softmax_bench.timing import TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=50)
DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


@triton.jit
def causal_floor_kernel(x_ptr, y_ptr, M, N, causal_m, BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, BLOCK_N)[None, :]
    inside = (rows < M) & (cols < N)
    kept = cols <= (rows % causal_m) + (N - causal_m)
    x = tl.load(x_ptr + rows * N + cols, mask=inside & kept, other=0.0)
    tl.store(y_ptr + rows * N + cols, x, mask=inside)


def floor(x: torch.Tensor, rows: int, warps: int) -> torch.Tensor:
    M, N = x.shape
    y = torch.empty_like(x)
    causal_floor_kernel[(triton.cdiv(M, rows),)](x, y, M, N, M, BLOCK_N=triton.next_power_of_2(N), ROWS=rows,
                                                 num_warps=warps)
    return y


def main(cells: list[str]) -> None:
    for cell in cells:
        shape, dtype_name = cell.split(":")
        M, N = map(int, shape.split("x"))
        x = torch.randn(M, N, dtype=DTYPES[dtype_name], device="cuda")
        fusion = ops.get_op("causal").fusion_for(x)
        model_bytes = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
        kept = torch.ones(M, N, dtype=torch.bool, device="cuda").tril(N - M)
        assert torch.equal(floor(x, 1, 4), torch.where(kept, x, 0)), "the floor kernel copies the kept columns"
        y = torch.empty_like(x)
        copy_ms = measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms
        expected_ms = copy_ms * model_bytes / (2 * x.nbytes)
        print(f"{cell} model {model_bytes / 1e6:.1f} MB of {2 * x.nbytes / 1e6:.1f}: copy {copy_ms * 1e3:.2f} µs, "
              f"roofline {expected_ms * 1e3:.2f} µs", flush=True)
        runs = {f"floor {r} row(s) {w} warps": (lambda r=r, w=w: floor(x, r, w))
                for r, w in ((1, 4), (1, 8), (2, 4), (4, 4))}
        runs["fused"] = lambda: fused.launch(x, fusion)
        for name, run in runs.items():
            ms = measure(run, SETTINGS, interpret=False).ms
            print(f"  {name:24} {ms * 1e3:7.2f} µs  {100 * expected_ms / ms:5.1f} % of the roofline", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["4096x4000:bf16", "16384x8192:bf16", "4096x4000:fp32"])
