"""cross_entropy: the loss over a vocabulary row in one kernel, and the gradient of the logits in the same launch.

One program a row walks the row in chunks twice. Pass 1 keeps a running max and a rescaled sum (per lane in fp32;
the row's log-sum-exp, lse), and the sums label smoothing needs; the target's logit is read alone. The row's loss is

    (1 − ε)·w_t·(lse − x_t) + (ε / V)·Σ_j w_j·(lse − x_j) + z·lse²

(w: the class weights, 1 without; ε: label smoothing; z: the z-loss), 0 for an ignored row, written times the
loss's scale (1 / the mean's divisor, or 1: a mean is then the sum of the rows'). When the logits need a gradient,
pass 2 reads the row again and writes it, times that scale:

    (1 − ε)·w_t·(p_j − [j = t]) + (ε / V)·(W·p_j − w_j) + 2z·lse·p_j,    p_j = e^(x_j − lse), W = Σ_j w_j,

times 1 − (x_j / c)² after a softcap c (x_j = c·tanh(raw_j / c), Gemma 2's; tanh as accurate as torch's: _tanh).
So a training step reads the logits twice (the second time from L2 for rows that stay there) and writes their
gradient once; a forward with no gradient reads them once and writes M floats. A row is read from the 16-byte
boundary before it in whole vectors (aligned.py), its gradient written so too, at any width and row stride.

A backward whose loss gradient is not 1 writes the gradient again (gradient_kernel: pass 2 alone, from the
forward's lse, its scale times that gradient), so that a 16-bit gradient is rounded once.
"""

from __future__ import annotations

import os
from functools import lru_cache

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from . import Traffic, cdiv, elem_size, fused, interpreted, launch_kernel, next_power_of_2
from .aligned import (aligned_row, block_values, partial_ends, running_max_and_sum, same_alignment, vector_elems,
                      window_lanes)
from .masking import log_of_sum
from .two_pass import L2_ROW_BYTES  # the rows whose second read two_pass finds in L2
from .two_pass import launch_config as two_pass_config  # its 16 KB chunks


# tanh in fp32, for the softcap c·tanh(x / c), as accurate as torch's. 1 − 2 / (e^(2u) + 1) alone lost u's low bits
# near 0, where tanh(u) ≈ u: its error is absolute (~6e-8), so a capped logit was off by ~c·6e-8 and the fp32
# gradient by 4.5e-6 at c = 30, 1.5e-3 at c = 1e4, against torch's < 9e-7 (Liger's suite found it). On a GPU,
# libdevice's tanhf (2 ulp); the interpreter runs no libdevice: there an odd Taylor polynomial where |u| < 0.4
# (its first left-out term under 2^-27 of tanh there) and the exponential form past it, with u's sign.
if os.environ.get("TRITON_INTERPRET") == "1":
    @triton.jit
    def _tanh(x):
        a = tl.abs(x)
        s = x * x
        near_zero = x + x * s * (-0.333333333333 + s * (0.133333333333 + s * (-0.0539682539683 + s * (
            0.0218694885362 + s * (-0.00886323552990 + s * (0.00359212803657 + s * -0.00145583438705))))))
        far = 1.0 - 2.0 / (tl.exp(2.0 * a) + 1.0)  # exact in its limit (1), no overflow
        return tl.where(a < 0.4, near_zero, tl.where(x < 0.0, -far, far))
else:
    @triton.jit
    def _tanh(x):
        return libdevice.tanh(x)


@triton.jit
def _logits(x_row, cols, inside, softcap, HAS_SOFTCAP: tl.constexpr):
    """The row's logits at cols, in fp32, after the softcap; -inf outside the row."""
    x = tl.load(x_row + cols, mask=inside, other=-float("inf")).to(tl.float32)
    if HAS_SOFTCAP:
        x = tl.where(inside, softcap * _tanh(x / softcap), -float("inf"))
    return x


@triton.jit
def _class_weights(weight_ptr, cols, inside, HAS_WEIGHT: tl.constexpr):
    """The class weights at cols in fp32 (1 without weights), 0 outside the row."""
    if HAS_WEIGHT:
        return tl.load(weight_ptr + cols, mask=inside, other=0.0).to(tl.float32)
    else:
        return inside.to(tl.float32)


@triton.jit
def _online_step(m, s, x):
    """A lane's running max m and sum s = Σ e^(x_i − m) after one more value x, with one exponential:
    e^(−|x − m|) is the new term when x ≤ m, and the old sum's rescale when x > m (the new term is then 1). A lane
    that has seen only -inf keeps m = -inf, s = 0."""
    e = tl.where(x == -float("inf"), 0.0, tl.exp(-tl.abs(x - m)))
    grows = x > m
    return tl.maximum(m, x), tl.where(grows, s * e + 1.0, s + e)


@triton.jit
def _row_max_and_sum(m, s):
    """The row's max and Σ e^(x − max) from its lanes' running max and sum."""
    row_max = tl.max(m, axis=0)
    shift = tl.where(row_max == -float("inf"), 0.0, row_max)  # an all -inf row: exp(-inf − -inf) would be NaN
    return row_max, tl.sum(s * tl.exp(m - shift), axis=0)


@triton.jit
def _window(x_row, lanes, start, off, row_lanes, first_whole, end_whole, V, softcap,
            BLOCK: tl.constexpr, HAS_SOFTCAP: tl.constexpr):
    """Lanes [start, start + BLOCK) of a row's window (aligned.py: whole 16-byte vectors from the boundary before
    the row) as fp32 logits after the softcap, -inf outside the row."""
    x = block_values(x_row, lanes, start, 0, off, row_lanes, first_whole, end_whole, V, 1.0, x_row, 0, 0, "",
                     BLOCK, False, False, False)
    if HAS_SOFTCAP:
        cols = lanes - off
        x = tl.where((cols >= 0) & (cols < V), softcap * _tanh(x / softcap), -float("inf"))
    return x


@triton.jit
def _gradient(p, x, cols, target, a, target_term, scale, smoothing, V, weight_ptr, softcap,
              HAS_WEIGHT: tl.constexpr, HAS_SMOOTHING: tl.constexpr, HAS_SOFTCAP: tl.constexpr,
              AT_TARGET: tl.constexpr = True):
    """dloss/dlogit at cols (p: the probabilities there, x: the capped logits, -inf outside the row, where it is 0),
    times scale; AT_TARGET=False leaves out the target's own term (−target_term at cols == target)."""
    d = a * p
    if AT_TARGET:
        d -= tl.where(cols == target, target_term, 0.0)
    if HAS_SMOOTHING:
        d -= smoothing / V * _class_weights(weight_ptr, cols, (cols >= 0) & (cols < V), HAS_WEIGHT)
    if HAS_SOFTCAP:
        d *= tl.where(x == -float("inf"), 0.0, 1.0 - (x / softcap) * (x / softcap))
    return d * scale


@triton.jit
def _target_weight(weight_ptr, target, V, HAS_WEIGHT: tl.constexpr):
    """The target's class weight in fp32 (1 without weights)."""
    return tl.sum(_class_weights(weight_ptr, target + tl.arange(0, 1), target + tl.arange(0, 1) < V, HAS_WEIGHT),
                  axis=0)


@triton.jit
def _coefficient(target_term, smoothing, weights, z_loss, lse, V, HAS_SMOOTHING: tl.constexpr, HAS_Z: tl.constexpr):
    """p_j's coefficient in a row's gradient (weights: W = Σ_j w_j); the constant term at j = t is target_term."""
    a = target_term
    if HAS_SMOOTHING:
        a += smoothing / V * weights
    if HAS_Z:
        a += 2.0 * z_loss * lse
    return a


@triton.jit
def _gradient_in_chunks(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                        target_term, scale, smoothing, weight_ptr, BLOCK: tl.constexpr, HAS_WEIGHT: tl.constexpr,
                        HAS_SMOOTHING: tl.constexpr, HAS_SOFTCAP: tl.constexpr):
    """Pass 2: the row's whole vectors read again block by block and their gradient written (times scale)."""
    for start in range(0, row_lanes, BLOCK):
        lanes = start + tl.arange(0, BLOCK)
        x = _window(x_row, lanes, start, off, row_lanes, first_whole, end_whole, V, softcap, BLOCK, HAS_SOFTCAP)
        d = _gradient(tl.exp(x - lse), x, lanes - off, target, a, target_term, scale, smoothing, V, weight_ptr,
                      softcap, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP).to(dx_row.dtype.element_ty)
        if (start >= first_whole) & (start + BLOCK <= end_whole):
            tl.store(dx_row + lanes, d)
        else:
            tl.store(dx_row + lanes, d, mask=(lanes >= first_whole) & (lanes < end_whole))


@triton.jit
def _gradient_at_ends(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                      target_term, scale, smoothing, weight_ptr, VEC: tl.constexpr, HAS_WEIGHT: tl.constexpr,
                      HAS_SMOOTHING: tl.constexpr, HAS_SOFTCAP: tl.constexpr):
    """The gradient (times scale) of the row's elements in partial 16-byte vectors at its ends."""
    end_lanes, end_cols, at_end = partial_ends(off, first_whole, end_whole, 0, row_lanes, V, VEC)
    end_x = _logits(x_row, end_lanes, at_end, softcap, HAS_SOFTCAP)
    end_d = _gradient(tl.exp(end_x - lse), end_x, end_cols, target, a, target_term, scale, smoothing, V, weight_ptr,
                      softcap, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP)
    tl.store(dx_row + end_lanes, end_d.to(dx_row.dtype.element_ty), mask=at_end)


@triton.jit
def cross_entropy_kernel(x_ptr, stride_x, target_ptr, weight_ptr, loss_ptr, lse_ptr, dx_ptr, stride_dx,
                         scale_ptr, V, ignore_index, smoothing, z_loss, softcap,
                         BLOCK: tl.constexpr, VEC: tl.constexpr, HAS_WEIGHT: tl.constexpr,
                         HAS_SMOOTHING: tl.constexpr, HAS_SOFTCAP: tl.constexpr, HAS_Z: tl.constexpr,
                         WITH_GRAD: tl.constexpr, PER_LANE: tl.constexpr, ON_CHIP: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large logits
    # The row's window from the 16-byte boundary before it, read in whole vectors (aligned.py): a row of 50257
    # 16-bit logits starts at another offset from a boundary on every row, and masked by column it would be read
    # element by element.
    x_row, dx_row, off, row_lanes, first_whole, end_whole = aligned_row(x_ptr, dx_ptr, row, stride_x, stride_dx, V,
                                                                        VEC)
    target = tl.load(target_ptr + row).to(tl.int64)
    ignored = target == ignore_index
    target = tl.where(ignored, 0, target)
    if PER_LANE:
        # fp32: per lane, a running max and sum, and the sums label smoothing needs, reduced across the row once
        # after the loop, not every chunk. On the H200 the forward with no gradient takes the same time either way
        # (4096×128256: 0.525 ms per lane, 0.508–0.521 per chunk of 8 or 16 KB); the 24–32 % of a read once given
        # for per-chunk reductions was a forward with the gradient (docs/perf-notes.md, twelfth session).
        m = tl.full((BLOCK,), -float("inf"), tl.float32)
        s = tl.zeros((BLOCK,), tl.float32)
        weighted_x = tl.zeros((BLOCK,), tl.float32)  # Σ w_j·x_j (label smoothing)
        weights = tl.zeros((BLOCK,), tl.float32)  # W = Σ w_j
    else:
        # 16-bit: a running max and sum reduced every chunk. Twice the elements a byte make the per-lane update's
        # instructions cost more than the reductions' waits (bf16 128256 forward: 75 % of a read, 58 % per lane).
        m = tl.full((), -float("inf"), tl.float32)
        s = tl.full((), 0.0, tl.float32)
        weighted_x = tl.full((), 0.0, tl.float32)
        weights = tl.full((), 0.0, tl.float32)
    if ON_CHIP:
        # The whole row in registers (BLOCK covers its window): read once, and the gradient written from the same
        # exponentials, so a step reads the logits once and writes their gradient once. Not with label smoothing or
        # a softcap, whose columns' weights and logits spill there (launch_config).
        tl.static_assert(not (HAS_SMOOTHING or HAS_SOFTCAP), "rows with column terms are walked in chunks")
        lanes = tl.arange(0, BLOCK)
        x = _window(x_row, lanes, 0, off, row_lanes, first_whole, end_whole, V, softcap, BLOCK, HAS_SOFTCAP)
        m = tl.max(x, axis=0)
        e = tl.exp(x - tl.where(m == -float("inf"), 0.0, m))  # an all -inf row: exp(-inf − -inf) would be NaN
        s = tl.sum(e, axis=0)
    else:
        for start in range(0, row_lanes, BLOCK):
            lanes = start + tl.arange(0, BLOCK)
            x = _window(x_row, lanes, start, off, row_lanes, first_whole, end_whole, V, softcap, BLOCK, HAS_SOFTCAP)
            if PER_LANE:
                m, s = _online_step(m, s, x)
            else:
                m, s = running_max_and_sum(m, s, x)
            if HAS_SMOOTHING:
                cols = lanes - off
                inside = (cols >= 0) & (cols < V)
                w = _class_weights(weight_ptr, cols, inside, HAS_WEIGHT)
                if PER_LANE:
                    weighted_x += w * tl.where(inside, x, 0.0)
                    weights += w
                else:
                    weighted_x += tl.sum(w * tl.where(inside, x, 0.0), axis=0)
                    weights += tl.sum(w, axis=0)
        if PER_LANE:
            m, s = _row_max_and_sum(m, s)
            if HAS_SMOOTHING:
                weighted_x = tl.sum(weighted_x, axis=0)
                weights = tl.sum(weights, axis=0)
    lse = m + log_of_sum(s)
    x_t = _logits(x_row + off, target, target < V, softcap, HAS_SOFTCAP)
    target_term = (1.0 - smoothing) * _target_weight(weight_ptr, target, V, HAS_WEIGHT)  # the target's share of the
    # loss, and of p_t's gradient
    loss = target_term * (lse - x_t)
    if HAS_SMOOTHING:
        loss += smoothing / V * (weights * lse - weighted_x)
    if HAS_Z:
        loss += z_loss * lse * lse
    loss_scale = tl.load(scale_ptr)
    tl.store(loss_ptr + row, tl.where(ignored, 0.0, loss) * loss_scale)
    tl.store(lse_ptr + row, lse)
    if WITH_GRAD:
        scale = tl.where(ignored, 0.0, loss_scale)
        a = _coefficient(target_term, smoothing, weights, z_loss, lse, V, HAS_SMOOTHING, HAS_Z)
        # as aligned.normalize stores: whole vectors block by block, then the partial vectors at the row's ends
        if ON_CHIP:
            # without the target's term: comparing each of a thread's 64 columns with the target took registers
            # that the row needs (sm_90, bf16 32000 at 16 warps: 128 registers and 116 bytes spilled, 116 and none
            # without); the target's element is written again below
            d = _gradient(e * (1.0 / s), x, lanes - off, target, a, target_term, scale, smoothing, V, weight_ptr,
                          softcap, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP, AT_TARGET=False)
            tl.store(dx_row + lanes, d.to(dx_ptr.dtype.element_ty), mask=(lanes >= first_whole) & (lanes < end_whole))
        else:
            _gradient_in_chunks(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                                target_term, scale, smoothing, weight_ptr, BLOCK, HAS_WEIGHT, HAS_SMOOTHING,
                                HAS_SOFTCAP)
        _gradient_at_ends(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                          target_term, scale, smoothing, weight_ptr, VEC, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP)
        if ON_CHIP:
            # the target's element, after every store of the row (another thread's may have held it), from x_t as
            # read before any of them (inplace: the logits are overwritten by now)
            tl.debug_barrier()
            d_t = _gradient(tl.exp(x_t - lse), x_t, target, target, a, target_term, scale, smoothing, V, weight_ptr,
                            softcap, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP)
            tl.store(dx_row + off + target, d_t.to(dx_ptr.dtype.element_ty))


@triton.jit
def _targets_of(target_ptr, rows, M, V, ignore_index, weight_ptr, HAS_WEIGHT: tl.constexpr):
    """Rows' targets (an ignored or out-of-range one read as 0), whether each row counts (its target is not
    ignore_index), whether its target is out of [0, V) and not ignored (an error), and its class weight (1 without
    weights; 0 for a row ignored or out of range)."""
    t = tl.load(target_ptr + rows, mask=rows < M, other=ignore_index).to(tl.int64)
    kept = t != ignore_index
    valid = (t >= 0) & (t < V)
    target = tl.where(kept & valid, t, 0)
    return target, kept, kept & ~valid, _class_weights(weight_ptr, target, kept & valid, HAS_WEIGHT)


@triton.jit
def _divisor(count, given_ptr, GIVEN: tl.constexpr):
    """The mean's divisor: the targets not ignored, each counted by its class weight (as torch), or the given."""
    if GIVEN:
        return tl.load(given_ptr)
    return tl.sum(count, axis=0)


@triton.jit
def _check_targets(bad, ok_ptr):
    """ok_ptr[0] 1.0 where no target is out of range, else 0.0; compiled for a GPU (debug=True on the kernel),
    a device-side assert there besides, as torch's own loss raises (the interpreter skips it: the caller asserts
    ok_ptr)."""
    none_bad = tl.sum(bad.to(tl.int32), axis=0) == 0
    tl.device_assert(none_bad, "cross_entropy: a target is out of bounds: outside [0, V) and not ignore_index")
    tl.store(ok_ptr, tl.where(none_bad, 1.0, 0.0))


@triton.jit(debug=True)  # its device_assert (_check_targets)
def targets_kernel(target_ptr, M, V, ignore_index, weight_ptr, given_ptr, out_ptr, BLOCK: tl.constexpr,
                   HAS_WEIGHT: tl.constexpr, GIVEN: tl.constexpr, MEAN: tl.constexpr):
    """One program over the M targets, for what the loss needs of them all: out[0] the loss's scale (1 / the mean's
    divisor, the targets not ignored, each counted by its class weight, as torch, or the one given; else 1), out[1]
    1 where every target is ignore_index or in [0, V), else 0; out[2] 0 (the ticket of cluster_finish_kernel's
    programs)."""
    count = tl.zeros((BLOCK,), tl.float32)
    bad = tl.zeros((BLOCK,), tl.int1)
    for start in range(0, M, BLOCK):
        _, _, out_of_range, w_t = _targets_of(target_ptr, start + tl.arange(0, BLOCK), M, V, ignore_index,
                                              weight_ptr, HAS_WEIGHT)
        bad |= out_of_range
        count += w_t
    if MEAN:
        tl.store(out_ptr, 1.0 / _divisor(count, given_ptr, GIVEN))
    else:
        tl.store(out_ptr, 1.0)
    _check_targets(bad, out_ptr + 1)
    tl.store(out_ptr + 2, 0.0)


@triton.jit
def _recomputed_row(x_ptr, stride_x, target_ptr, weight_ptr, lse_ptr, dx_ptr, stride_dx, scale_ptr, dloss,
                    weights_ptr, V, ignore_index, smoothing, z_loss, softcap, BLOCK: tl.constexpr, VEC: tl.constexpr,
                    HAS_WEIGHT: tl.constexpr, HAS_SMOOTHING: tl.constexpr, HAS_SOFTCAP: tl.constexpr,
                    HAS_Z: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row, dx_row, off, row_lanes, first_whole, end_whole = aligned_row(x_ptr, dx_ptr, row, stride_x, stride_dx, V,
                                                                        VEC)
    target = tl.load(target_ptr + row).to(tl.int64)
    ignored = target == ignore_index
    target = tl.where(ignored, 0, target)
    lse = tl.load(lse_ptr + row)
    target_term = (1.0 - smoothing) * _target_weight(weight_ptr, target, V, HAS_WEIGHT)
    weights = V * 1.0
    if HAS_SMOOTHING and HAS_WEIGHT:
        weights = tl.load(weights_ptr)
    a = _coefficient(target_term, smoothing, weights, z_loss, lse, V, HAS_SMOOTHING, HAS_Z)
    scale = tl.where(ignored, 0.0, tl.load(scale_ptr) * dloss)
    _gradient_in_chunks(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                        target_term, scale, smoothing, weight_ptr, BLOCK, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP)
    _gradient_at_ends(x_row, dx_row, off, row_lanes, first_whole, end_whole, V, softcap, lse, target, a,
                      target_term, scale, smoothing, weight_ptr, VEC, HAS_WEIGHT, HAS_SMOOTHING, HAS_SOFTCAP)


@triton.jit
def gradient_kernel(x_ptr, stride_x, target_ptr, weight_ptr, lse_ptr, dx_ptr, stride_dx, scale_ptr, dloss_ptr,
                    dloss_stride, weights_ptr, V, ignore_index, smoothing, z_loss, softcap, BLOCK: tl.constexpr,
                    VEC: tl.constexpr, HAS_WEIGHT: tl.constexpr, HAS_SMOOTHING: tl.constexpr,
                    HAS_SOFTCAP: tl.constexpr, HAS_Z: tl.constexpr, UNLESS_ONE: tl.constexpr):
    """Row `row`'s gradient for the loss's gradient dloss, recomputed from the logits and the forward's lse:
    cross_entropy_kernel's pass 2 with its scale times dloss, in fp32, rounded once (weights_ptr: W = Σ_j w_j, read
    with label smoothing and class weights). UNLESS_ONE: a row whose dloss is exactly 1 is left as it is (the
    forward wrote it so): the program reads one float and ends."""
    dloss = tl.load(dloss_ptr + tl.program_id(0).to(tl.int64) * dloss_stride).to(tl.float32)
    if (dloss != 1.0) | (not UNLESS_ONE):
        _recomputed_row(x_ptr, stride_x, target_ptr, weight_ptr, lse_ptr, dx_ptr, stride_dx, scale_ptr, dloss,
                        weights_ptr, V, ignore_index, smoothing, z_loss, softcap, BLOCK, VEC, HAS_WEIGHT,
                        HAS_SMOOTHING, HAS_SOFTCAP, HAS_Z)


def gradient(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None, lse: torch.Tensor,
             dloss: torch.Tensor, scale: torch.Tensor, ignore_index: int, smoothing: float, z_loss: float,
             softcap: float | None, out: torch.Tensor | None = None) -> torch.Tensor:
    """The logits' gradient for the loss's gradient dloss (one float a row, or one for all), from 2-D logits (unit
    column stride), 1-D targets, each row's lse and the loss's scale (targets()'s) as the forward had them:
    computed in fp32 and rounded once, where scaling the gradient the forward wrote rounds twice (a 16-bit element
    1 ulp off about a quarter of the time). Into `out` (contiguous, as the forward's gradient), leaving the rows
    whose dloss is exactly 1, which the forward wrote as they are, decided on the device: then a launch and no pass;
    else into a new tensor, every row written. One read of the logits and one write: the bytes of scaling."""
    M, V = logits.shape
    unless_one = out is not None
    if out is None:
        out = torch.empty((M, V), dtype=logits.dtype, device=logits.device)
    if M == 0 or V == 0:
        return out
    logits = same_alignment(logits)  # rows at the offsets from a 16-byte boundary that out's rows have
    dloss = dloss.reshape(-1)
    weights = weight.sum(dtype=torch.float32) if weight is not None and smoothing != 0 else lse
    config = launch_config(V, logits.dtype, True, column_terms=True)  # chunks: one read of the row, not two
    launch_kernel(gradient_kernel, (M,), logits, logits.stride(0), target, weight if weight is not None else logits,
                  lse, out, out.stride(0), scale, dloss, dloss.stride(0) if dloss.numel() > 1 else 0, weights, V,
                  ignore_index, float(smoothing), float(z_loss), float(softcap or 1.0), BLOCK=config["BLOCK"],
                  VEC=vector_elems(logits.dtype), HAS_WEIGHT=weight is not None, HAS_SMOOTHING=smoothing != 0,
                  HAS_SOFTCAP=softcap is not None, HAS_Z=z_loss != 0, UNLESS_ONE=unless_one,
                  num_warps=config["num_warps"])
    return out


TARGETS_BLOCK = 1024


def targets(target: torch.Tensor, V: int, ignore_index: int, weight: torch.Tensor | None,
            given: torch.Tensor | None, mean: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(the loss's scale, one element; 1.0 where every target is ignored or in [0, V), else 0.0, 0-d; a zero, one
    element: cluster_finish_kernel's ticket) of contiguous targets, in one launch, where torch ops took eleven (a
    launch each)."""
    out = torch.empty(3, dtype=torch.float32, device=target.device)
    launch_kernel(targets_kernel, (1,), target, target.numel(), V, ignore_index,
                  weight if weight is not None else out, given if given is not None else out, out,
                  BLOCK=TARGETS_BLOCK, HAS_WEIGHT=weight is not None, GIVEN=given is not None, MEAN=mean,
                  num_warps=4)
    return out[0:1], out[1], out[2:3]


@triton.jit
def scale_unless_one_kernel(g_ptr, stride_g, stride_col, V, scale_ptr, scale_stride, BLOCK: tl.constexpr):
    """Row `row` of g times its scale, in place (computed in fp32, rounded once to g's dtype), unless that scale is
    exactly 1: then the program reads one float and ends. Program (row, p) takes the row's chunks p, p + P, …;
    whole chunks unmasked, so that a row on the 16-byte grid moves in vectors."""
    row = tl.program_id(0).to(tl.int64)
    scale = tl.load(scale_ptr + row * scale_stride).to(tl.float32)
    if scale != 1.0:
        g_row = g_ptr + row * stride_g
        for start in range(tl.program_id(1) * BLOCK, V, tl.num_programs(1) * BLOCK):
            at = g_row + (start + tl.arange(0, BLOCK)) * stride_col
            if start + BLOCK <= V:
                tl.store(at, (tl.load(at).to(tl.float32) * scale).to(g_ptr.dtype.element_ty))
            else:
                inside = start + tl.arange(0, BLOCK) < V
                g = tl.load(at, mask=inside)
                tl.store(at, (g.to(tl.float32) * scale).to(g_ptr.dtype.element_ty), mask=inside)


SCALE_BLOCK = 2048
SCALE_PROGRAMS = 1024  # programs enough to fill an H200 (132 SMs) when a scale is not 1, however few the rows


def scale_unless_one(rows: torch.Tensor, scale: torch.Tensor) -> None:
    """rows (M, V, any strides) times scale in place, row by row (scale: M floats, or one for all rows),
    decided on the device: a scale of exactly 1 costs a launch and no pass over the rows, and nothing waits for the
    GPU to say which it is. Contiguous rows under one scale are taken as one flat row, so that widths off the
    16-byte grid (50257) still move in vectors."""
    M, V = rows.shape
    if M == 0 or V == 0:
        return
    scale = scale.reshape(-1)
    if scale.numel() == 1 and rows.is_contiguous() and M * V < 2**31:  # offsets within a row stay 32-bit
        rows = rows.view(1, M * V)
        M, V = rows.shape
    chunks = cdiv(V, SCALE_BLOCK)
    launch_kernel(scale_unless_one_kernel, (M, min(chunks, max(1, SCALE_PROGRAMS // M))), rows,
                  rows.stride(0), rows.stride(1), V, scale, scale.stride(0) if scale.numel() > 1 else 0,
                  BLOCK=SCALE_BLOCK, num_warps=4)


@triton.jit
def cluster_prologue_kernel(x_ptr, stride_x, target_ptr, x_t_ptr, M, V, ignore_index):
    """Before a cluster writes a row's gradient over its logits (in place): the row's target logit."""
    row = tl.program_id(0).to(tl.int64)
    target, _, _, _ = _targets_of(target_ptr, row, M, V, ignore_index, target_ptr, False)
    tl.store(x_t_ptr + row, tl.load(x_ptr + row * stride_x + target).to(tl.float32))


@triton.jit(debug=True)  # its device_assert (_check_targets, COUNT)
def cluster_finish_kernel(dx_ptr, stride_dx, x_ptr, stride_x, target_ptr, weight_ptr, x_t_ptr, lse_ptr, scale_ptr,
                          given_ptr, loss_ptr, partial_ptr, ticket_ptr, ok_ptr, M, V, ignore_index, z_loss,
                          BLOCK: tl.constexpr, HAS_WEIGHT: tl.constexpr, HAS_Z: tl.constexpr,
                          WITH_GRAD: tl.constexpr, X_T_GIVEN: tl.constexpr, REDUCE: tl.constexpr,
                          COUNT: tl.constexpr, GIVEN: tl.constexpr, MEAN: tl.constexpr, WAIT: tl.constexpr = False):
    """After the cluster, programs over the M rows, BLOCK at a time (program p the blocks p, p + P, …): each row's
    loss, w_t · (lse − x_t) + z · lse² times the scale (0 for an ignored row), their sum into loss_ptr[0] (REDUCE)
    or each into loss_ptr[row]; with the gradient the target's element, which the cluster wrote as p_t · (f + 2z ·
    scale · lse) with f = w_t · scale: that less f. x_t: the prologue's (X_T_GIVEN: read before an in-place
    gradient overwrote the logits), else the logits'. The scale is scale_ptr[0] (the targets' kernel's), or with
    COUNT (one program: a forward, no gradient) this program's own: the targets' kernel's work done here, its
    divisor (`given` or counted) and its check. Several programs sum in two steps, the same loss each run: each its
    own rows' into partial_ptr[p], then the last to take a ticket (ticket_ptr, zeroed by the targets' kernel) the
    partial sums, in order. WAIT (launched as the cluster's programmatic dependent, FINISH_PDL): the targets, their
    weights and logits are read while the cluster's last programs finish, then griddepcontrol.wait for its
    lses and gradient before anything the cluster wrote is read or written."""
    program = tl.program_id(0)
    programs = tl.num_programs(0)
    scale = 1.0
    if not COUNT:
        scale = tl.load(scale_ptr)
    total = tl.zeros((BLOCK,), tl.float32)
    count = tl.zeros((BLOCK,), tl.float32)
    bad = tl.zeros((BLOCK,), tl.int1)
    for start in range(program * BLOCK, M, programs * BLOCK):
        rows = start + tl.arange(0, BLOCK)
        inside = rows < M
        target, kept, out_of_range, w_t = _targets_of(target_ptr, rows, M, V, ignore_index, weight_ptr,
                                                      HAS_WEIGHT)
        if COUNT:
            count += w_t
            bad |= out_of_range
        if not WAIT:  # beside the targets' loads, not after their gather (which waits for them)
            lse = tl.load(lse_ptr + rows, mask=inside, other=0.0)
        if X_T_GIVEN:
            x_t = tl.load(x_t_ptr + rows, mask=inside, other=0.0)
        else:
            x_t = tl.load(x_ptr + rows.to(tl.int64) * stride_x + target, mask=inside, other=0.0).to(tl.float32)
        if WAIT:
            tl.extra.cuda.gdc_wait()
            lse = tl.load(lse_ptr + rows, mask=inside, other=0.0)
        loss = w_t * (lse - x_t)
        if HAS_Z:
            loss += z_loss * lse * lse
        loss = tl.where(kept, loss, 0.0) * scale
        if REDUCE:
            total += loss
        else:
            tl.store(loss_ptr + rows, loss, mask=inside)
        if WITH_GRAD:
            factor = w_t * scale
            p_factor = factor
            if HAS_Z:
                p_factor += tl.where(kept, 2.0 * z_loss * scale, 0.0) * lse
            d_t = tl.exp(x_t - lse) * p_factor - factor
            tl.store(dx_ptr + rows.to(tl.int64) * stride_dx + target, d_t.to(dx_ptr.dtype.element_ty),
                     mask=inside & kept)
    if REDUCE:
        total_loss = tl.sum(total, axis=0)
        if programs > 1:
            tl.store(partial_ptr + program, total_loss)
            if tl.atomic_add(ticket_ptr, 1.0) == programs - 1:  # acq_rel: every program's partial is stored
                sums = tl.zeros((BLOCK,), tl.float32)
                for first in range(0, programs, BLOCK):
                    at = first + tl.arange(0, BLOCK)
                    sums += tl.load(partial_ptr + at, mask=at < programs, other=0.0, cache_modifier=".cg")
                tl.store(loss_ptr, tl.sum(sums, axis=0))
        else:
            if COUNT and MEAN:
                total_loss = total_loss / _divisor(count, given_ptr, GIVEN)
            tl.store(loss_ptr, total_loss)
    if COUNT:
        _check_targets(bad, ok_ptr)


# A forward with no gradient: one program finishes every row (it counts them too, so its own sum is the last
# step), 4096 rows at a time in 32 warps, each thread's 4 rows' loads in flight together; compiled for sm_90 (bf16),
# 43–44 registers of the 64 a thread of 32 warps may hold (with the gradient, 8192 rows at a time spilled 40 bytes).
# With the gradient, FINISH_ROWS rows a program of 4 warps (32–40 registers): on the H200 one program took 17.6 µs
# of a step at 8192 rows (6.0 at 2048), where a program a row and torch's sum had taken 6.7 and 2.7, and programs of
# FINISH_ROWS 5.3 (5.1) (bf16 8192×50257, twenty-sixth session): one SM's gathers of the targets' logits are slow.
FINISH_BLOCK = 4096
FINISH_ROWS = 512
# The finishing kernel launched as the cluster kernel's programmatic dependent (launch_pdl; sm_90): it starts as
# the cluster's last programs exit, not after the kernel's end and a launch, and reads what the cluster does not
# write (targets, weights, the targets' logits) before it waits for the cluster's writes. On the H200 the finishing
# program of a forward took 4.4 µs after a 0.151 ms kernel (bf16 2048×151936, twenty-sixth session): 91 % of a read
# against issue 27's 92. Prediction: 1–3 µs of the finish and the gap before it saved, ≥ 92. Measured (twenty-eighth
# session, evidence/experiments/2026-12-04-session27/next.sh ab-pdl: ce-split.py off, then on; the outputs bit for
# bit): that forward 0.1599 → 0.1587 ms (91.9 → 92.3 % of a read), its step 89.9 → 90.9 % of a copy, the other
# vocabularies' steps and forwards 0.3–1 point faster; in the vocab sweep (evidence/runs/cross-entropy-pdl-h200,
# against cross-entropy-quack-h200-b) bf16 151936's forward 91.4 → 93.5. SOFTMAX_BENCH_FINISH_PDL=0 turns it off.
FINISH_PDL = os.environ.get("SOFTMAX_BENCH_FINISH_PDL", "1") != "0"


# Rows held across a thread-block cluster (kernels/cluster.py) as a softmax row is: one read of the logits, and
# with the gradient one write, where chunks read them twice. On the H200 (fifteenth session,
# evidence/experiments/2026-12-02-session14/ab-ce-cluster.py, % of a copy for the step, of a read for the forward)
# the bf16 step went 59 → 78 % at 4096×128256, 56 → 74 at 2048×151936, 54 → 78 at 8192×50257, 64 → 76 at 16384×32000,
# and the fp32 step 59–62 → 85–89 at the three vocabularies. Where it lost, chunks or one CTA keep the rows: fp32
# forwards up to FP32_CHUNKS_UP_TO logits (50257: 91.5 against 89.5; 32000: 93.5 against 88.4) and fp32 steps whose
# row one CTA holds (32000: 87.5 against 83.9).
CLUSTER_ROWS = True
FP32_CHUNKS_UP_TO = 65536


def on_cluster(V: int, dtype: torch.dtype, column_terms: bool = False, with_grad: bool = True) -> bool:
    """Whether rows of V logits go to a cluster (CLUSTER_ROWS, where the cluster variant runs, at its widths, and
    where it was measured ahead): not with label smoothing or a softcap, whose terms a column at a time the
    cluster's softmax does not compute."""
    if not CLUSTER_ROWS or column_terms:
        return False
    if elem_size(dtype) == 4 and V <= FP32_CHUNKS_UP_TO:
        if not with_grad or launch_config(V, dtype, True)["ON_CHIP"]:
            return False
    from . import cluster

    return cluster.why_not_here() is None and cluster.unsupported_width(V, dtype) is None


def launch_on_cluster(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None, ignore_index: int,
                      z_loss: float, with_grad: bool, inplace: bool, reduce: bool, given: torch.Tensor | None = None,
                      mean: bool = False, scale: torch.Tensor | None = None, ticket: torch.Tensor | None = None
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
    """launch's result for rows on a cluster: the cluster's one pass over the logits (the lses; with the gradient
    every element of it but the targets', each row's factor read with the row), then cluster_finish_kernel (the
    losses, their sum, the targets' elements). An in-place gradient reads the targets' logits first, in a
    prologue, before the cluster overwrites them. With the gradient, scale and ticket are the targets' kernel's
    (the cluster needs the scale), and FINISH_ROWS rows a program finish; without, one program finishes and does
    the targets' work (`given`, `mean`: the divisor's), and its check is returned besides (else None). A prologue
    for the factors took 4 µs of a 0.29 ms forward, the mean's sum 2.3, and a microsecond of the GPU's between
    kernels each (H200, bf16 4096×128256, twenty-fifth session)."""
    from . import cluster

    M, V = logits.shape
    device = logits.device
    loss = torch.empty(() if reduce else M, dtype=torch.float32, device=device)
    lse = torch.empty(M, dtype=torch.float32, device=device)
    dx = x_t = ok = None
    weights = weight if weight is not None else logits
    if with_grad:
        dx = logits if inplace else torch.empty((M, V), dtype=logits.dtype, device=device)
        programs, block, warps = cdiv(M, FINISH_ROWS), FINISH_ROWS, 4
    else:
        ok = torch.empty((), dtype=torch.float32, device=device)
        programs, block, warps = 1, FINISH_BLOCK, 32
    if inplace and with_grad:
        x_t = torch.empty(M, dtype=torch.float32, device=device)
        launch_kernel(cluster_prologue_kernel, (M,), logits, logits.stride(0), target, x_t, M, V, ignore_index)
    partials = torch.empty(programs, dtype=torch.float32, device=device) if programs > 1 else lse
    cluster.launch_cross_entropy(logits, dx, lse, target, weight, scale, ignore_index, z_loss)
    launch_kernel(cluster_finish_kernel, (programs,), dx if dx is not None else logits,
                  dx.stride(0) if dx is not None else logits.stride(0), logits, logits.stride(0), target, weights,
                  x_t if x_t is not None else lse, lse, scale if scale is not None else lse,
                  given if given is not None else lse, loss, partials, ticket if ticket is not None else lse,
                  ok if ok is not None else lse, M, V, ignore_index, float(z_loss), BLOCK=block,
                  HAS_WEIGHT=weight is not None, HAS_Z=z_loss != 0, WITH_GRAD=dx is not None,
                  X_T_GIVEN=x_t is not None, REDUCE=reduce, COUNT=not with_grad, GIVEN=given is not None, MEAN=mean,
                  num_warps=warps, **dependent_launch())
    return loss, lse, dx, ok


def dependent_launch() -> dict:
    """The finishing kernel's launch options under FINISH_PDL (where this Triton has griddepcontrol, and not in its
    interpreter, which has no gdc_wait), else none."""
    if not FINISH_PDL or interpreted() or not hasattr(getattr(tl.extra, "cuda", None), "gdc_wait"):
        return {}
    return {"WAIT": True, "launch_pdl": True}


@lru_cache(maxsize=1024)  # asked at each forward and each backward (2 µs a call on a CPU)
def launch_config(V: int, dtype: torch.dtype, with_grad: bool, column_terms: bool = False) -> dict:
    """With the gradient, rows whose window fits fused's registers (up to 32768 lanes, fused.MAX_N) are held on
    chip, with fused's warps: one read and one write, where chunks read the row twice (H200, 16384×32000: the
    kernel 1.50 → 1.07 ms in fp32, 0.76 → 0.72 in bf16). Not with column_terms (label smoothing, a softcap: the
    gradient needs each column's weight or logit beside its probability), which spill there (sm_90, 32000: 160–4000
    bytes), nor for a forward with no gradient: held on chip, a row takes a whole SM's registers and the next row's
    loads wait for it (bf16 0.35 → 0.54 ms; docs/perf-notes.md, twelfth session). Else fp32 rows are walked per
    lane in 8 KB chunks with 8 warps, 16-bit rows in two_pass's 16 KB. The dict is cached, shared: read it, do not
    change it."""
    lanes = next_power_of_2(window_lanes(V, dtype))
    if with_grad and not column_terms and lanes <= fused.MAX_N:
        warps = fused.launch_config(1, lanes, dtype)["num_warps"]
        return {"BLOCK": max(lanes, vector_elems(dtype)), "num_warps": warps, "PER_LANE": False, "ON_CHIP": True}
    if elem_size(dtype) == 4:
        return {"BLOCK": 2048, "num_warps": 8, "PER_LANE": True, "ON_CHIP": False}
    return {**two_pass_config(V, dtype), "PER_LANE": False, "ON_CHIP": False}


def launch(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor | None, ignore_index: int,
           smoothing: float, z_loss: float, softcap: float | None, with_grad: bool, inplace: bool = False,
           reduction: str = "mean", given: torch.Tensor | None = None
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor | None]:
    """(the loss as reduced: 0-d for mean and sum, one a row for none; each row's lse; the logits' gradient of that
    loss or None; 1.0 where every target is ignore_index or in [0, V), else 0.0, 0-d: on a GPU the kernels raise
    it themselves, a device-side assert; the loss's scale, targets()'s, or None for rows on a cluster without the
    gradient) of 2-D logits with unit column stride (any row stride) and 1-D targets.
    given: what mean divides by (a 0-d fp32 tensor), else the rows not ignored, each counted by its target's
    weight. The gradient (in the logits' dtype) is written only with_grad, already over the mean's divisor;
    inplace: over the logits' rows (each vector of a row is read before the same thread writes its gradient
    there), or over the copy that reading them in whole vectors needed (rows at other offsets from a 16-byte
    boundary than a contiguous gradient's), which it returns."""
    logits = same_alignment(logits)
    M, V = logits.shape
    mean, reduce = reduction == "mean", reduction != "none"
    cluster_rows = M and on_cluster(V, logits.dtype, smoothing != 0 or softcap is not None, with_grad)
    if cluster_rows and not with_grad:  # one program after the cluster does the targets' work too
        return (*launch_on_cluster(logits, target, weight, ignore_index, z_loss, False, False, reduce, given, mean),
                None)
    # the loss's scale (1 / the mean's divisor: each row's loss and gradient come over it, so that a mean is the
    # rows' sum) and the targets' check: one launch, where torch ops took eleven
    scale, ok, ticket = targets(target, V, ignore_index, weight, given, mean)
    if cluster_rows:
        return (*launch_on_cluster(logits, target, weight, ignore_index, z_loss, with_grad, inplace, reduce,
                                   scale=scale, ticket=ticket)[:3], ok, scale)
    loss = torch.empty(M, dtype=torch.float32, device=logits.device)
    lse = torch.empty(M, dtype=torch.float32, device=logits.device)
    if not with_grad:
        dx = None
    else:
        dx = logits if inplace else torch.empty((M, V), dtype=logits.dtype, device=logits.device)
    launch_kernel(cross_entropy_kernel, (M,), logits, logits.stride(0), target,
                  weight if weight is not None else logits, loss, lse,
                  dx if dx is not None else logits, dx.stride(0) if dx is not None else logits.stride(0),
                  scale, V, ignore_index, float(smoothing), float(z_loss),
                  float(softcap or 1.0), VEC=vector_elems(logits.dtype), HAS_WEIGHT=weight is not None,
                  HAS_SMOOTHING=smoothing != 0, HAS_SOFTCAP=softcap is not None, HAS_Z=z_loss != 0,
                  WITH_GRAD=dx is not None,
                  **launch_config(V, logits.dtype, dx is not None, smoothing != 0 or softcap is not None))
    return (loss.sum() if reduce else loss), lse, dx, ok, scale


def traffic(M: int, V: int, dtype: torch.dtype, with_grad: bool, column_terms: bool = False) -> Traffic:
    """Pass 1 reads the logits (and M targets, M losses and lses written); with a gradient, a row held on chip (in
    one CTA's registers, or across a cluster's: on_cluster) is written from its registers, and a wider one is read
    again by pass 2 — from L2 for rows of up to two_pass's L2_ROW_BYTES, as its second read — and written."""
    nbytes = M * V * elem_size(dtype)
    passes = (("pass 1: read the logits (lse, loss)", nbytes + M * 8, M * 8),)
    if not with_grad:
        return Traffic(passes)
    if launch_config(V, dtype, with_grad, column_terms)["ON_CHIP"] or on_cluster(V, dtype, column_terms, True):
        return Traffic(passes + (("write the gradient from the row held on chip", 0, nbytes),))
    again = (("pass 2: read the logits again", nbytes, 0),)
    store = (("pass 2: write the gradient", 0, nbytes),)
    if V * elem_size(dtype) <= L2_ROW_BYTES:
        return Traffic(passes + store, from_l2=again)
    return Traffic(passes + again + store)
