"""Rows of any length and alignment in 16-byte vectors: the loops of the kernels that walk a row in blocks.

A row of N = 50257 bf16 elements starts at a different offset from a 16-byte boundary on every row; masked by
column, its loads and stores fall back to 2-byte accesses and the kernel runs out of instructions before it
runs out of bandwidth. Here a row is read from the boundary at or before its start (`off` elements before
it), in whole vectors: a vector that holds any element of the row is read whole — it never crosses a page, so
it is mapped — and its lanes outside the row become -inf. Blocks of whole vectors inside the row (all but the
first and last of a row) load and store without masks; stores write the whole vectors inside the row, and the
at most two partial vectors at its ends element by element.

y's rows must start as far past a boundary as x's: `same_alignment` sees to it.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import elem_size
from .masking import normalized, scale_and_mask


def vector_elems(dtype: torch.dtype) -> int:
    """Elements in a 16-byte vector."""
    return 16 // elem_size(dtype)


def window_lanes(N: int, dtype: torch.dtype) -> int:
    """Lanes a row's window may span: a row of N elements can start up to VEC - 1 lanes past a 16-byte boundary
    (rows of a contiguous tensor start on one when N is a multiple of VEC)."""
    vec = vector_elems(dtype)
    return N + (vec - 1 if N % vec else 0)


def same_alignment(x: torch.Tensor) -> torch.Tensor:
    """x, or a contiguous copy when its rows would start at other offsets from a 16-byte boundary than the rows
    of a contiguous output of its shape."""
    vec = vector_elems(x.dtype)
    if (x.data_ptr() // x.element_size()) % vec or (x.stride(0) - x.shape[1]) % vec:
        return x.contiguous()
    return x


@triton.jit
def aligned_row(x_ptr, y_ptr, row, stride_x, stride_y, N, VEC: tl.constexpr):
    """Row `row` of x and y from the 16-byte boundary before it: (x_row, y_row, off, row_lanes, first_whole,
    end_whole). Lanes count from the boundary; the row is lanes [off, off + N); its vectors end at row_lanes;
    lanes [first_whole, end_whole) are whole vectors inside the row."""
    off = ((row * stride_x) % VEC).to(tl.int32)
    x_row = x_ptr + tl.multiple_of(row * stride_x - off, VEC)
    y_row = y_ptr + tl.multiple_of(row * stride_y - off, VEC)
    row_lanes = tl.cdiv(off + N, VEC) * VEC
    first_whole = tl.cdiv(off, VEC) * VEC
    end_whole = (off + N) // VEC * VEC
    return x_row, y_row, off, row_lanes, first_whole, end_whole


@triton.jit
def row_values(x, row, cols, N, scale, mask_ptr, mask_stride, causal_m,
               HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
               bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0):
    """x in fp32 with the fusion applied. Lanes outside the row (cols < 0 or ≥ N: the neighbouring rows' values)
    become -inf: they never win the max and add exp(-inf) = 0 to the sum."""
    inside = (cols >= 0) & (cols < N)
    x = tl.where(inside, x.to(tl.float32), -float("inf"))
    return scale_and_mask(x, row, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                          HAS_SCALE, HAS_MASK, CAUSAL, bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)


@triton.jit
def block_values(x_row, lanes, start, row, off, row_lanes, first_whole, end_whole, N,
                 scale, mask_ptr, mask_stride, causal_m, EVICTION: tl.constexpr,
                 BLOCK: tl.constexpr, HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                 bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0):
    """The block of lanes [start, start + BLOCK) of a row, in fp32 with the fusion applied, -inf outside the row."""
    if (start >= first_whole) & (start + BLOCK <= end_whole):
        # Whole vectors inside the row: no masks. In bf16 per-element masks cost more instructions than the
        # loads leave time for (docs/perf-notes.md).
        x = tl.load(x_row + lanes, eviction_policy=EVICTION).to(tl.float32)
        x = scale_and_mask(x, row, lanes - off, lanes >= 0, scale, mask_ptr, mask_stride, causal_m, N,
                           HAS_SCALE, HAS_MASK, CAUSAL, bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
    else:
        x = tl.load(x_row + lanes, mask=lanes < row_lanes, other=-float("inf"), eviction_policy=EVICTION)
        x = row_values(x, row, lanes - off, N, scale, mask_ptr, mask_stride, causal_m, HAS_SCALE, HAS_MASK, CAUSAL,
                       bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
    return x


@triton.jit
def max_and_sum(x_row, row, off, row_lanes, first_whole, end_whole, seg_start, seg_end, N,
                scale, mask_ptr, mask_stride, causal_m, EVICTION: tl.constexpr,
                BLOCK: tl.constexpr, HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0):
    """The max of lanes [seg_start, seg_end) of a row and the sum of exp(x - max), in fp32 whatever the dtype:
    a running max, and a running sum rescaled when the max grows. seg_start is a multiple of BLOCK; loads use
    the L2 eviction policy EVICTION ("" for the default)."""
    m = tl.full((), -float("inf"), tl.float32)
    s = tl.full((), 0.0, tl.float32)
    for start in range(seg_start, seg_end, BLOCK):
        lanes = start + tl.arange(0, BLOCK)
        x = block_values(x_row, lanes, start, row, off, row_lanes, first_whole, end_whole, N,
                         scale, mask_ptr, mask_stride, causal_m, EVICTION, BLOCK, HAS_SCALE, HAS_MASK, CAUSAL,
                         bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
        m, s = running_max_and_sum(m, s, x)
    return m, s


@triton.jit
def running_max_and_sum(m, s, x):
    """A running max m and sum s = Σ e^(x_i − m) after one more block x: the block's max, and the sum rescaled
    when the max grows."""
    m_new = tl.maximum(m, tl.max(x, axis=0))
    # While every value so far is -inf, shift by 0: exp(-inf - -inf) would be NaN.
    shift = tl.where(m_new == -float("inf"), 0.0, m_new)
    return m_new, s * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)


@triton.jit
def normalize(x_row, y_row, row, off, row_lanes, first_whole, end_whole, seg_start, seg_end, N, shift, norm,
              scale, mask_ptr, mask_stride, causal_m, EVICTION: tl.constexpr,
              BLOCK: tl.constexpr, VEC: tl.constexpr,
              HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
              bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0):
    """Store y = exp(x - shift) · norm (log_softmax: x − shift − norm; masking.normalized) over lanes
    [seg_start, seg_end) of a row (loads and stores with the L2 eviction policy EVICTION): the whole vectors block
    by block, then element by element the partial vectors at the row's ends (`partial_ends`)."""
    for start in range(seg_start, seg_end, BLOCK):
        lanes = start + tl.arange(0, BLOCK)
        x = block_values(x_row, lanes, start, row, off, row_lanes, first_whole, end_whole, N,
                         scale, mask_ptr, mask_stride, causal_m, EVICTION, BLOCK, HAS_SCALE, HAS_MASK, CAUSAL,
                         bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
        y = normalized(x, shift, norm, LOG).to(y_row.dtype.element_ty)
        if (start >= first_whole) & (start + BLOCK <= end_whole):
            tl.store(y_row + lanes, y, eviction_policy=EVICTION)
        else:
            whole = (lanes >= first_whole) & (lanes < end_whole)
            tl.store(y_row + lanes, y, mask=whole, eviction_policy=EVICTION)
    end_lanes, end_cols, at_end = partial_ends(off, first_whole, end_whole, seg_start, seg_end, N, VEC)
    end_x = tl.load(x_row + end_lanes, mask=at_end, other=-float("inf"))
    end_x = row_values(end_x, row, end_cols, N, scale, mask_ptr, mask_stride, causal_m, HAS_SCALE, HAS_MASK, CAUSAL,
                       bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
    tl.store(y_row + end_lanes, normalized(end_x, shift, norm, LOG).to(y_row.dtype.element_ty), mask=at_end)


@triton.jit
def partial_ends(off, first_whole, end_whole, seg_start, seg_end, N, VEC: tl.constexpr):
    """The row's elements in partial 16-byte vectors, within lanes [seg_start, seg_end): the head vector (when the
    row starts past a boundary) and the tail vector (when it ends before one and is not the head), as
    (lanes, cols, which of them are such elements)."""
    ends = tl.arange(0, 2 * VEC)
    end_lanes = tl.where(ends < VEC, ends, end_whole + ends - VEC)
    end_cols = end_lanes - off
    is_partial = tl.where(ends < VEC, off > 0, end_whole >= first_whole)
    at_end = is_partial & (end_cols >= 0) & (end_cols < N) & (end_lanes >= seg_start) & (end_lanes < seg_end)
    return end_lanes, end_cols, at_end
