"""two_pass: any N. Pass 1 walks the row in chunks keeping a running max and a rescaled running sum;
pass 2 reads the row again, normalizes and stores. Two reads and one write. Rows of any alignment move in
16-byte vectors (softmax_bench.kernels.aligned)."""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from . import (PLAIN, Fusion, Launch, Traffic, Variant, elem_size, launch_kernel, mask_pass,
               next_power_of_2, output_like)
from .aligned import aligned_row, max_and_sum, normalize, same_alignment, vector_elems
from .masking import fusion_args, mask_rows, normalizer

# 16 KB of input per chunk: enough bytes in flight per program, few registers per thread.
CHUNK_BYTES = 16384
NUM_WARPS = 8
# Rows of up to 64 KB are still in L2 when pass 2 reads them again: the rows in flight (a row a program, a few
# programs an SM) fit in the H200's 60 MB. Measured there (evidence/runs/20261130-020251-h200): rows of 8–64 KB run at
# 70–98 % of a copy, which two reads and a write from HBM could not; rows of 128 KB and wider at 60–66 %, what two
# reads and a write from HBM give at a copy's speed.
L2_ROW_BYTES = 65536


@triton.jit
def two_pass_kernel(x_ptr, y_ptr, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m,
                    BLOCK: tl.constexpr, VEC: tl.constexpr,
                    HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                    mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False,
                    bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0,
                    bias_group=1, bias_period=0, BIAS_SHARED: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large tensors
    mask_ptr, mask_stride = mask_rows(mask_ptr, mask_stride, row, mask_group, mask_period, MASK_SHARED)
    if HAS_BIAS:  # only then: Triton 3.6 cannot return bias_ptr's None from a function
        bias_ptr, bias_stride = mask_rows(bias_ptr, bias_stride, row, bias_group, bias_period, BIAS_SHARED)
    x_row, y_row, off, row_lanes, first_whole, end_whole = aligned_row(x_ptr, y_ptr, row, stride_x, stride_y, N, VEC)
    m, s = max_and_sum(x_row, row, off, row_lanes, first_whole, end_whole, 0, row_lanes, N,
                       scale, mask_ptr, mask_stride, causal_m, "", BLOCK, HAS_SCALE, HAS_MASK, CAUSAL,
                       bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
    shift = tl.where(m == -float("inf"), 0.0, m)  # an all -inf row: zeros, not NaN
    normalize(x_row, y_row, row, off, row_lanes, first_whole, end_whole, 0, row_lanes, N, shift, normalizer(s, LOG),
              scale, mask_ptr, mask_stride, causal_m, "", BLOCK, VEC, HAS_SCALE, HAS_MASK, CAUSAL, LOG,
              bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)


@lru_cache(maxsize=1024)
def launch_config(N: int, dtype: torch.dtype) -> dict:
    """BLOCK and num_warps for rows of N elements of dtype; shared between calls: read it, do not change it."""
    # at least one 16-byte vector: a row is read from the boundary before it
    block = min(max(next_power_of_2(N), 16 // elem_size(dtype)), CHUNK_BYTES // elem_size(dtype))
    return {"BLOCK": block, "num_warps": NUM_WARPS}


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    M, N = x.shape
    x = same_alignment(x)
    y = output_like(x, fusion)
    config = launch_config(N, x.dtype)
    compiled = launch_kernel(two_pass_kernel, (M,), x, y, N, x.stride(0), y.stride(0), **fusion_args(fusion, x),
                             **config, VEC=vector_elems(x.dtype))
    return y, Launch(config, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """Pass 1 reads x (and the mask); pass 2 reads them again — from L2 for rows of up to L2_ROW_BYTES — and
    writes y."""
    nbytes = M * N * elem_size(dtype)
    first = (("pass 1: read x (max, sum)", nbytes, 0),) + mask_pass(fusion)
    again = (("pass 2: read x again", nbytes, 0),) + mask_pass(fusion)
    store = (("pass 2: write y", 0, nbytes),)
    if N * elem_size(dtype) <= L2_ROW_BYTES:
        return Traffic(first + store, from_l2=again)
    return Traffic(first + again + store)


VARIANT = Variant(
    name="two_pass",
    summary="chunked running max and rescaled sum, then a second read to normalize: two reads, one write",
    launch=launch,
    traffic=traffic,
    triton=True,
    flops_per_element=7,  # pass 2 subtracts and exponentiates again
)
