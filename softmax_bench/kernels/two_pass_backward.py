"""two_pass's backward: any N. Pass 1 walks the rows of y and dy in chunks and sums dy·y (log_softmax: dy) in fp32;
pass 2 reads them again and writes dx. Two reads of each and one write; the second read comes from L2 while a
program's rows of y and dy fit there, as two_pass's does."""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from . import PLAIN, Backward, Fusion, Launch, Traffic, backward_traffic, elem_size, output_like
from .masking import fusion_args, input_gradient, row_sum_terms
from .two_pass import L2_ROW_BYTES, NUM_WARPS

# 8 KB of each of y and dy per chunk (fp32): two_pass's 16 KB in flight, over two tensors.
CHUNK_ELEMS = 2048


@triton.jit
def two_pass_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_y, stride_dy, stride_dx,
                             scale, mask_ptr, mask_stride, causal_m,
                             BLOCK: tl.constexpr,
                             HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                             LOG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large tensors
    y_row = y_ptr + row * stride_y
    dy_row = dy_ptr + row * stride_dy
    dx_row = dx_ptr + row * stride_dx
    terms = tl.zeros([BLOCK], tl.float32)  # summed once at the end: fp32 whatever the dtype
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        # padding adds nothing: dy is 0 there (and y is finite: 0 · 0)
        y = tl.load(y_row + cols, mask=inside, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=inside, other=0.0).to(tl.float32)
        terms += row_sum_terms(y, dy, LOG)
    row_sum = tl.sum(terms, axis=0)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        inside = cols < N
        y = tl.load(y_row + cols, mask=inside, other=0.0).to(tl.float32)
        dy = tl.load(dy_row + cols, mask=inside, other=0.0).to(tl.float32)
        dx = input_gradient(y, dy, row_sum, row, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                            HAS_SCALE, HAS_MASK, CAUSAL, LOG)
        tl.store(dx_row + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)


@lru_cache(maxsize=1024)
def launch_config(N: int) -> dict:
    """BLOCK and num_warps for rows of N elements; shared between calls: read it, do not change it."""
    return {"BLOCK": min(triton.next_power_of_2(N), CHUNK_ELEMS), "num_warps": NUM_WARPS}


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    M, N = y.shape
    dx = output_like(y)
    config = launch_config(N)
    compiled = two_pass_backward_kernel[(M,)](y, dy, dx, N, y.stride(0), dy.stride(0), dx.stride(0),
                                              **fusion_args(fusion, y), **config)
    return dx, Launch(config, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """Pass 1 reads y and dy; pass 2 reads them again — from L2 while both rows together take at most two_pass's
    L2_ROW_BYTES — and writes dx (log_softmax reads the mask there)."""
    nbytes = M * N * elem_size(dtype)
    once = backward_traffic(M, N, dtype, fusion)
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
