"""Issue 26's premise at causal bf16 4096×4000: can any kernel that moves the traffic model's bytes (each row's kept
columns read, y written whole) run at 92 % of the cell's roofline (the copy's time scaled by those bytes)? The
thirty-second session's floor (causal-floor.py: rows in order, elements masked one by one) reached 88.1 % on the
H200, fused 75.9 (83.8 in causal-h200-ftz since). Not tried then, and tried here, in one process, each kernel
checked against torch.where(kept, x, 0) first:
- floor, rows in order or last to first (fused's HEAVIEST_FIRST), kept columns masked by element or by whole
  16-byte vectors (fused's kept_vectors), 1 row a program in 4 or 8 warps;
- persistent: one program an SM slot, rows last to first, strided;
- the two halves of the floor apart: y written whole and nothing read; the kept columns read and one float a row
  written. Their sum against the floor says whether reads and writes overlap;
- the copy as a Triton kernel in the floor's tile (whole rows), beside torch's copy_ (the roofline's basis);
- fused's causal kernel as auto launches it.

    python3 causal-floor2.py [MxN:dtype ...]     (default: 4096x4000:bf16 4096x4000:fp32 16384x8192:bf16)
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
def read_kept(x_ptr, row, cols, M, N, causal_m, VECTORS: tl.constexpr):
    inside = (row < M) & (cols < N)
    last = (row % causal_m) + (N - causal_m)
    if VECTORS:  # whole 16-byte vectors up to the diagonal, the rest of the last one selected away
        vec = 128 // x_ptr.dtype.element_ty.primitive_bitwidth
        x = tl.load(x_ptr + row * N + cols, mask=inside & ((cols // vec) * vec <= last), other=0.0)
        return tl.where(cols <= last, x, 0.0), inside
    return tl.load(x_ptr + row * N + cols, mask=inside & (cols <= last), other=0.0), inside


@triton.jit
def floor_kernel(x_ptr, y_ptr, M, N, causal_m, BLOCK_N: tl.constexpr, REVERSED: tl.constexpr,
                 VECTORS: tl.constexpr):
    row = tl.program_id(0)
    if REVERSED:
        row = tl.num_programs(0) - 1 - row
    cols = tl.arange(0, BLOCK_N)
    x, inside = read_kept(x_ptr, row, cols, M, N, causal_m, VECTORS)
    tl.store(y_ptr + row * N + cols, x, mask=inside)


@triton.jit
def persistent_floor_kernel(x_ptr, y_ptr, M, N, causal_m, BLOCK_N: tl.constexpr, VECTORS: tl.constexpr):
    cols = tl.arange(0, BLOCK_N)
    for r in range(tl.program_id(0), M, tl.num_programs(0)):
        row = M - 1 - r
        x, inside = read_kept(x_ptr, row, cols, M, N, causal_m, VECTORS)
        tl.store(y_ptr + row * N + cols, x, mask=inside)


@triton.jit
def write_only_kernel(y_ptr, M, N, BLOCK_N: tl.constexpr):
    row = tl.num_programs(0) - 1 - tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    tl.store(y_ptr + row * N + cols, tl.zeros([BLOCK_N], y_ptr.dtype.element_ty), mask=cols < N)


@triton.jit
def read_only_kernel(x_ptr, sums_ptr, M, N, causal_m, BLOCK_N: tl.constexpr):
    row = tl.num_programs(0) - 1 - tl.program_id(0)
    x, _ = read_kept(x_ptr, row, tl.arange(0, BLOCK_N), M, N, causal_m, True)
    tl.store(sums_ptr + row, tl.sum(x.to(tl.float32), axis=0))


@triton.jit
def copy_kernel(x_ptr, y_ptr, M, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    tl.store(y_ptr + row * N + cols, tl.load(x_ptr + row * N + cols, mask=cols < N), mask=cols < N)


def main(cells: list[str]) -> None:
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, Triton {triton.__version__}", flush=True)
    for cell in cells:
        shape, dtype_name = cell.split(":")
        M, N = map(int, shape.split("x"))
        x = torch.randn(M, N, dtype=DTYPES[dtype_name], device="cuda")
        y = torch.empty_like(x)
        sums = torch.empty(M, dtype=torch.float32, device="cuda")
        fusion = ops.get_op("causal").fusion_for(x)
        model_bytes = one_pass_traffic(M, N, x.dtype, fusion).total_bytes
        block = triton.next_power_of_2(N)
        expected = torch.where(torch.ones(M, N, dtype=torch.bool, device="cuda").tril(N - M), x, 0)
        runs = {}
        for warps in (4, 8):
            for reversed_rows in (False, True):
                for vectors in (False, True):
                    name = (f"floor {warps} warps, rows {'last first' if reversed_rows else 'in order'}, "
                            f"{'vectors' if vectors else 'elements'}")
                    runs[name] = (lambda w=warps, r=reversed_rows, v=vectors: floor_kernel[(M,)](
                        x, y, M, N, M, BLOCK_N=block, REVERSED=r, VECTORS=v, num_warps=w), True)
            for per_sm in (8, 16):
                runs[f"persistent {warps} warps, {per_sm} programs an SM"] = (
                    lambda w=warps, p=per_sm: persistent_floor_kernel[(min(M, p * sms),)](
                        x, y, M, N, M, BLOCK_N=block, VECTORS=True, num_warps=w), True)
        runs["y written, nothing read (4 warps)"] = (lambda: write_only_kernel[(M,)](y, M, N, BLOCK_N=block,
                                                                                      num_warps=4), False)
        runs["kept read, a float a row written (4 warps)"] = (lambda: read_only_kernel[(M,)](
            x, sums, M, N, M, BLOCK_N=block, num_warps=4), False)
        runs["Triton copy, whole rows (4 warps)"] = (lambda: copy_kernel[(M,)](x, y, M, N, BLOCK_N=block,
                                                                                num_warps=4), False)
        runs["fused (auto's launch)"] = (lambda: fused.launch(x, fusion), False)
        for name, (run, checked) in runs.items():
            if checked:
                y.fill_(float("nan"))
                run()
                assert torch.equal(y, expected), f"{name} wrote other than the kept columns and zeros"
        copy_ms = measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms
        expected_ms = copy_ms * model_bytes / (2 * x.nbytes)
        print(f"{cell}: model {model_bytes / 1e6:.1f} MB of a copy's {2 * x.nbytes / 1e6:.1f}; torch's copy "
              f"{copy_ms * 1e3:.2f} µs; roofline {expected_ms * 1e3:.2f} µs, 92 % of it {expected_ms / 0.92 * 1e3:.2f}",
              flush=True)
        for name, (run, _) in runs.items():
            ms = measure(run, SETTINGS, interpret=False).ms
            print(f"  {name:48} {ms * 1e3:7.2f} µs  {100 * expected_ms / ms:5.1f} % of the roofline", flush=True)
        copy_again = measure(lambda: y.copy_(x), SETTINGS, interpret=False).ms
        print(f"  torch's copy again {copy_again * 1e3:.2f} µs", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["4096x4000:bf16", "4096x4000:fp32", "16384x8192:bf16"])
