"""two_pass: any N. Pass 1 walks the row in chunks keeping a running max and a rescaled running sum;
pass 2 reads the row again, normalizes and stores. Two reads and one write."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import PLAIN, Fusion, Launch, Traffic, Variant, elem_size, mask_pass
from .masking import fusion_args, scale_and_mask

# 16 KB of input per chunk: enough bytes in flight per program, few registers per thread.
CHUNK_BYTES = 16384
NUM_WARPS = 8


@triton.jit
def two_pass_kernel(x_ptr, y_ptr, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m,
                    BLOCK: tl.constexpr,
                    HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large tensors
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m = tl.full((), -float("inf"), tl.float32)  # running max
    s = tl.full((), 0.0, tl.float32)  # running sum of exp(x - m), fp32 whatever the input dtype
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        x = tl.load(x_row + cols, mask=inside, other=-float("inf")).to(tl.float32)
        x = scale_and_mask(x, row, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                           HAS_SCALE, HAS_MASK, CAUSAL)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # While every value so far is -inf, shift by 0: exp(-inf - -inf) would be NaN.
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        s = s * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
        m = m_new
    shift = tl.where(m == -float("inf"), 0.0, m)
    inv_s = 1.0 / tl.where(s == 0.0, 1.0, s)  # an all -inf row: zeros, not 0/0
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        x = tl.load(x_row + cols, mask=inside, other=-float("inf")).to(tl.float32)
        x = scale_and_mask(x, row, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                           HAS_SCALE, HAS_MASK, CAUSAL)
        y = tl.exp(x - shift) * inv_s
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


def launch_config(M: int, N: int, dtype: torch.dtype) -> dict:
    block = min(triton.next_power_of_2(N), CHUNK_BYTES // elem_size(dtype))
    return {"BLOCK": block, "num_warps": NUM_WARPS}


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    M, N = x.shape
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    config = launch_config(M, N, x.dtype)
    compiled = two_pass_kernel[(M,)](x, y, N, x.stride(0), y.stride(0), **fusion_args(fusion, x), **config)
    return y, Launch(config, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    nbytes = M * N * elem_size(dtype)
    passes = (("pass 1: read x (max, sum)", nbytes, 0), ("pass 2: read x, write y", nbytes, nbytes))
    return Traffic(passes + mask_pass(fusion) * 2)  # both passes read the mask


VARIANT = Variant(
    name="two_pass",
    summary="chunked running max and rescaled sum, then a second read to normalize: two reads, one write",
    launch=launch,
    traffic=traffic,
    triton=True,
    flops_per_element=7,  # pass 2 subtracts and exponentiates again
)
