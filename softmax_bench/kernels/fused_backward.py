"""fused's backward: the rows of y and dy in registers; one read of each, one write of dx.

Two rows held where the forward holds one, so half its widest row: at N = 16384 and 16 warps a thread holds
32 + 32 fp32 values, what the forward holds at N = 32768. Narrow rows share a program as in the forward.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import PLAIN, Backward, Fusion, Launch, backward_traffic, cdiv, launch_kernel, output_like
from .fused import MAX_N as FORWARD_MAX_N
from .fused import launch_config
from .masking import fusion_args, input_gradient, row_sum_terms

MAX_N = FORWARD_MAX_N // 2


@triton.jit
def fused_backward_kernel(y_ptr, dy_ptr, dx_ptr, M, N, stride_y, stride_dy, stride_dx,
                          scale, mask_ptr, mask_stride, causal_m,
                          BLOCK_N: tl.constexpr, ROWS: tl.constexpr,
                          HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows < M)[:, None] & (cols < N)[None, :]
    rows = rows.to(tl.int64)[:, None]  # 64-bit: row · stride passes 2^31 on large tensors
    cols = cols[None, :]
    # Padding adds nothing to the sum: dy is 0 there, and y is 0 (softmax) or -inf (log_softmax: e^y = 0).
    if LOG:
        y = tl.load(y_ptr + rows * stride_y + cols, mask=inside, other=-float("inf")).to(tl.float32)
    else:
        y = tl.load(y_ptr + rows * stride_y + cols, mask=inside, other=0.0).to(tl.float32)
    dy = tl.load(dy_ptr + rows * stride_dy + cols, mask=inside, other=0.0).to(tl.float32)
    row_sum = tl.sum(row_sum_terms(y, dy, LOG), axis=1)[:, None]  # fp32 whatever the dtype
    dx = input_gradient(y, dy, row_sum, rows, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                        HAS_SCALE, HAS_MASK, CAUSAL, LOG)
    tl.store(dx_ptr + rows * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN,
           config: dict | None = None) -> tuple[torch.Tensor, Launch]:
    """config: BLOCK_N, ROWS and num_warps to launch with (None: the forward's tiles; scripts/fused-configs.py)."""
    M, N = y.shape
    dx = output_like(y)
    config = config or launch_config(M, N)  # fp32's tiles whatever the dtype: measured so (scripts/fused-configs.py)
    grid = (cdiv(M, config["ROWS"]),)
    compiled = launch_kernel(fused_backward_kernel, grid, y, dy, dx, M, N, y.stride(0), dy.stride(0), dx.stride(0),
                             **fusion_args(fusion, y), **config)
    return dx, Launch(config, [compiled])


BACKWARD = Backward(
    name="fused",
    summary="the rows of y and dy in registers: one read of each, one write of dx",
    launch=launch,
    traffic=backward_traffic,
    triton=True,
    max_n=MAX_N,
)
