"""two_pass's backward: any N. Pass 1 walks the rows of y and dy in chunks and sums dy·y (log_softmax: dy) in fp32;
pass 2 reads them again and writes dx. Two reads of each and one write; the second read comes from L2 while a
program's rows of y and dy fit there, as two_pass's does.

Rows of any length and alignment move in 16-byte vectors, as two_pass's (softmax_bench.kernels.aligned): y's, dy's
and dx's rows start as far past a 16-byte boundary (the launch sees to it), and lanes count from the boundary at or
before a row's start; lanes outside the row read as 0, which adds nothing to the sum.
"""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from . import (PLAIN, Backward, Fusion, Launch, Traffic, backward_traffic, elem_size, launch_kernel,
               next_power_of_2, output_like)
from .aligned import aligned_row, partial_ends, same_alignment, vector_elems
from .masking import fusion_args, input_gradient, mask_rows, row_sum_terms
from .two_pass import L2_ROW_BYTES, NUM_WARPS

# 8 KB of each of y and dy per chunk: two_pass's 16 KB in flight, over two tensors.
CHUNK_BYTES = 8192


@triton.jit
def block_pair(y_row, dy_row, lanes, start, off, row_lanes, first_whole, end_whole, N, BLOCK: tl.constexpr):
    """y and dy over the lanes [start, start + BLOCK) of a row, in fp32, 0 outside the row."""
    if (start >= first_whole) & (start + BLOCK <= end_whole):
        # Whole vectors inside the row: no masks (in bf16, per-element masks cost more instructions than the
        # loads leave time for: docs/perf-notes.md).
        y = tl.load(y_row + lanes).to(tl.float32)
        dy = tl.load(dy_row + lanes).to(tl.float32)
    else:
        # a vector that holds any element of the row is read whole: it never crosses a page, so it is mapped
        y = tl.load(y_row + lanes, mask=lanes < row_lanes, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + lanes, mask=lanes < row_lanes, other=0.0).to(tl.float32)
        inside = (lanes >= off) & (lanes < off + N)
        y = tl.where(inside, y, 0.0)
        dy = tl.where(inside, dy, 0.0)
    return y, dy


@triton.jit
def two_pass_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_y, stride_dy, stride_dx,
                             scale, mask_ptr, mask_stride, causal_m,
                             BLOCK: tl.constexpr, VEC: tl.constexpr,
                             HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                             LOG: tl.constexpr, mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large tensors
    mask_ptr, mask_stride = mask_rows(mask_ptr, mask_stride, row, mask_group, mask_period, MASK_SHARED)
    y_row, dx_row, off, row_lanes, first_whole, end_whole = aligned_row(y_ptr, dx_ptr, row, stride_y, stride_dx, N,
                                                                        VEC)
    dy_row = aligned_row(dy_ptr, dy_ptr, row, stride_dy, stride_dy, N, VEC)[0]
    terms = tl.zeros([BLOCK], tl.float32)  # summed once at the end: fp32 whatever the dtype
    for start in range(0, row_lanes, BLOCK):
        lanes = start + tl.arange(0, BLOCK)
        y, dy = block_pair(y_row, dy_row, lanes, start, off, row_lanes, first_whole, end_whole, N, BLOCK)
        terms += row_sum_terms(y, dy, LOG)
    row_sum = tl.sum(terms, axis=0)
    for start in range(0, row_lanes, BLOCK):
        lanes = start + tl.arange(0, BLOCK)
        y, dy = block_pair(y_row, dy_row, lanes, start, off, row_lanes, first_whole, end_whole, N, BLOCK)
        dx = input_gradient(y, dy, row_sum, row, lanes - off, (lanes >= off) & (lanes < off + N),
                            scale, mask_ptr, mask_stride, causal_m, N, HAS_SCALE, HAS_MASK, CAUSAL, LOG)
        dx = dx.to(dx_ptr.dtype.element_ty)
        if (start >= first_whole) & (start + BLOCK <= end_whole):
            tl.store(dx_row + lanes, dx)
        else:
            tl.store(dx_row + lanes, dx, mask=(lanes >= first_whole) & (lanes < end_whole))
    end_lanes, end_cols, at_end = partial_ends(off, first_whole, end_whole, 0, row_lanes, N, VEC)
    y = tl.load(y_row + end_lanes, mask=at_end, other=0.0).to(tl.float32)
    dy = tl.load(dy_row + end_lanes, mask=at_end, other=0.0).to(tl.float32)
    dx = input_gradient(y, dy, row_sum, row, end_cols, at_end, scale, mask_ptr, mask_stride, causal_m, N,
                        HAS_SCALE, HAS_MASK, CAUSAL, LOG)
    tl.store(dx_row + end_lanes, dx.to(dx_ptr.dtype.element_ty), mask=at_end)


@lru_cache(maxsize=1024)
def launch_config(N: int, dtype: torch.dtype) -> dict:
    """BLOCK and num_warps for rows of N elements of dtype; shared between calls: read it, do not change it."""
    # at least one 16-byte vector: a row is read from the boundary before it
    block = min(max(next_power_of_2(N), vector_elems(dtype)), CHUNK_BYTES // elem_size(dtype))
    return {"BLOCK": block, "num_warps": NUM_WARPS}


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    M, N = y.shape
    y, dy = same_alignment(y), same_alignment(dy)
    dx = output_like(y)
    config = launch_config(N, y.dtype)
    compiled = launch_kernel(two_pass_backward_kernel, (M,), y, dy, dx, N, y.stride(0), dy.stride(0), dx.stride(0),
                             **fusion_args(fusion, y), **config, VEC=vector_elems(y.dtype))
    return dx, Launch(config, [compiled])
def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """Pass 1 reads y and dy; pass 2 reads them again — from L2 while both rows together take at most two_pass's
    L2_ROW_BYTES — and writes dx (log_softmax reads the mask there)."""
    nbytes = M * N * elem_size(dtype)
    once = backward_traffic(M, N, dtype, fusion, skips_causal=False)  # a causal row read whole
    again = (("pass 2: read y and dy again", 2 * nbytes, 0),)
    if 2 * N * elem_size(dtype) <= L2_ROW_BYTES:
        return Traffic(once.passes, from_l2=again)
    return Traffic(once.passes + again)


BACKWARD = Backward(
    name="two_pass",
    summary="sum dy·y over the row in chunks, then read y and dy again to write dx: any N",
    launch=launch,
    traffic=traffic,
    triton=True,
)
