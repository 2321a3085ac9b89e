"""fused: the seed's kernel. The whole row lives in registers: one read of x, one write of y.

For narrow rows one program takes several rows (a ROWS × BLOCK_N tile), so that a program still holds
enough elements to keep its warps busy and its bytes in flight.
"""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from . import (PLAIN, Fusion, Launch, Variant, cdiv, config_shape, forward_evict_setting, launch_kernel,
               next_power_of_2, one_pass_traffic, output_like)
from .masking import (exp2_ftz, first_row, fusion_args, group_shift, keeps_none, kept_vectors, last_kept,
                      log_of_sum, mask_rows, normalized, normalizer, rows_differ, scale_and_mask)

# A program holds at least this many bytes of input (2048 16-bit values, 1024 fp32 ones): below it, several rows
# share a program. On the H200 fp32 rows of 32, 512 and 1024 ran 2.1–3.2 points of a copy faster in 1024-value
# programs of 4 warps than in 2048-value ones, ahead of torch.compile's one-warp tiles; 16-bit rows ran best at
# 2048 values already (docs/perf-notes.md, thirtieth session).
MIN_BYTES_PER_PROGRAM = 4096
# (largest BLOCK_N · ROWS, num_warps): each thread holds BLOCK_N · ROWS / (32 · num_warps) values. A program of at
# most FOUR_WARPS_BYTES of input (2048 fp32 values, 4096 16-bit ones) runs 4 warps: on the H200, bf16 4096×4000 ran
# at 102.0 % of a copy with 4 warps and 98.1 % with fp32's 8 (docs/perf-notes.md); wider 16-bit rows measured
# best with fp32's warps (8192: 8 or 16, 16384: 16).
FOUR_WARPS_BYTES = 8192
NUM_WARPS_BY_BLOCK = ((8192, 8), (2**62, 16))
# A biased row is three streams (x, the bias, y) where a plain row is two. On the H100 (forty-eighth session,
# scripts/fused-configs.py, % of a copy of the op's bytes, forward and log) its programs of 8 to 32 KB of input ran
# best where each thread holds one 16-byte vector of the row and no less: fp32 8192 100.6 → 101.7 and 4096 101.2 →
# 102.6 in 32 warps (8 the default), bf16 8192 101.8 → 102.2 in 32, bf16 4096 102.2 → 102.9 in 16 (4 the default;
# 83 in 32, half a vector a thread); then fp32 2048 101.7 → 102.3 in 16 (4 the default), bf16 16384 102.0 → 102.2 in
# 32 (16). Wider biased rows keep NUM_WARPS_BY_BLOCK's warps (not measured). On the H200 (fifty-eighth session) a
# vector a thread lost 9–12 points at 16 KB programs (bf16 8192 91.1 against 103.2 in 16 warps, fp32 4000 91.3
# against 101.1) and 3 at 8 KB (bf16 4000 97.0 against 99.7 in 8): a program holds two vectors a thread, which cost
# the H100 at most 1.2 points (fp32 4096 102.6 → 101.4).
BIASED_WARPS_BYTES = (8192, 32768)
BIASED_BYTES_PER_WARP = 32 * 16 * 2
# At 16 warps a thread may hold 128 registers (65536 per SM / 512 threads). BLOCK_N = 32768 is 64 fp32 values a
# thread and compiles without spills on the H200; BLOCK_N = 65536 is 128 values, spills, and its compiled code
# (and speed: 40 % then 28 % of copy) changed from one process to the next (docs/perf-notes.md). Wider rows go
# to two_pass or online.
MAX_N = 32768
# Causal rows whose queries keep no key (bottom-right aligned, the first causal_m − N of them when causal_m > N): a
# program of only such rows writes them and skips the rest. On the H200 the grid's narrow causal cells (M ≫ N, all
# but the last N rows masked out) ran at a copy's time whatever they read, 0.13–0.18 ms at 2^27 elements: as long as
# issuing the tile's instructions takes (causal bf16 N = 32: 528 SASS instructions a thread for 16 elements, 65536
# programs of 4 warps on 132 SMs: 0.14 ms at 1.98 GHz; fp32, 680: 0.18), not its bytes; more rows a program were
# slower (docs/perf-notes.md, sixteenth session). A skipped program issues ~80 instructions (sm_90). On the H200
# (seventeenth session, evidence/experiments/2026-12-02-session16/ab-skip-masked.py, bit for bit the whole tile's
# output, % of a copy of the op's bytes): bf16 N = 32 … 1024 from 50.6–54.4 to 107.6–109.1, 2048 59.3 → 107.6, 4096
# 67.7 → 101.3, 8192 69.9 → 83.8; fp32 32 … 512 from 80–89 to 107–109, 1024 98.8 → 107.8, 8192 81.0 → 93.3; no
# width slower.
SKIP_MASKED_PROGRAMS = True
# Causal rows keep from none to all of their columns: programs run the rows last to first, so that the longest
# start first and the shortest fill the last wave (a longest-first schedule) instead of the longest making its tail;
# where the rows' kept shares differ by more than a quarter of N (causal_m > N / 4: rows_differ). On the H200
# (twentieth session, evidence/experiments/2026-12-03-session20/ab-heaviest-first.py, % of a copy of the op's
# bytes, bit for bit row order's output): fp32 4096×4000 98.7 → 107.3, 32768×4096 105.3 → 108.4, bf16 32768×4096
# 101.3 → 104.0, 16384×8192 82.1 → 84.0; fp32 16384×8192 92.5 → 92.2, bf16 4096×4000 93.9 → 92.1 (both spreads
# overlapping).
HEAVIEST_FIRST = True
# A causal row (no keep-mask, no bias) set to -inf past its diagonal as bits (masking.scale_and_mask's CAUSAL_BITS:
# all ones from the sign of last − col) instead of a compare and a select an element. Compiled for sm_90, the
# select's predicates had ptxas issue half a thread's loads, then wait on them (tests.compile_sm90.load_waves: bf16
# 8192 and 16384 [2, 2], fp32 8192 [4, 1, 1, 1, 1]); as bits, all at once ([4], [4], [8]) and in fewer instructions
# (bf16 8192 712 → 688 SASS, fp32 840 → 680). Bit for bit the select's output (tests/test_fusion.py). Prediction for
# the H200: causal 16384×8192 from 83 % of its roofline to ≥ 92 in bf16 and from 94 to ≥ 98 in fp32, 4096×4000 (bf16
# 73, fp32 94) up, no cell slower. Measured (twenty-third session, ab-causal-bits.py, % of a copy of the op's bytes,
# bit for bit): bf16 16384×8192 84.0 → 90.9, 4096×4000 92.5 → 97.0, 32768×4096 104.7 → 106.4; fp32 16384×8192
# 93.2 → 100.9; the other cells within ±1.2.
CAUSAL_BITS = True
# A positive scale alone (no mask, causal or bias) leaves the -inf its padding loads as -inf: no select
# (masking.scale_and_mask's POSITIVE_SCALE), whose predicates had ptxas issue an fp32 tile's loads in waves
# (compiled for sm_90: fp32 8192 [2, 3, 3], 16384 [2, 1, 5]; without it [8], as a plain row's). Prediction for the
# H200 (`--op scaled`, scaled-h200: fp32 8192 at 95.6 % of its roofline, 16384 at 89.7, a plain row 98–99): ≥ 98.
# Measured (twenty-fourth session, scaled-h200-b): 8192 97.6, 16384 98.5, the other cells within ±1 (bf16 512 +2.0).
# On the GPU x · scale − max then compiles to one fused multiply-add (fp32 1024 for sm_90: 16 fma.rn.f32 in place
# of a mul and a sub each): the output is the select's within that rounding (bit for bit where x · scale is exact).
POSITIVE_SCALES = True
# Causal rows (CAUSAL_BITS' rows) whose registers cost their tile a program an SM, capped (ptxas's maxnreg) where
# that spills nothing: (bytes an element, N, log): cap. bf16 8192 in 8 warps takes 57 registers, 4 programs an SM,
# 5 at 48; bf16 4000 in 4 warps 53, 9 an SM, 10 at 48 (compiled for sm_90). On the H200 (twenty-eighth session,
# evidence/experiments/2026-12-04-session27/ab-fused-caps.py, five alternating rounds, bit for bit, % of a copy of
# the op's bytes): 16384×8192 90.3 → 92.4, its log 89.8 → 92.7; 4096×4000 97.7 → 99.1, its log 101.1 → 94.8 (not
# capped). fp16 compiles alike (57 and 52 registers, 48 capped, no spill; unmeasured).
CAUSAL_REGISTERS: dict[tuple[int, int, bool], int] = {(2, 8192, False): 48, (2, 8192, True): 48, (2, 4000, False): 48}
# Causal rows narrower than this load plainly, not evict_last (kernels.FORWARD_EVICT): on the H200 (thirty-first
# session, scripts/eviction.py, % of a copy of the op's bytes) evict_last lost at 4096 (fp32 107.9 → 106.3, bf16
# 106.3 → 104.4) and bf16 8192 (90.3 → 89.8), and won from 16384 (fp32 16384 96.7 → 99.5, 32768 96.6 → 98.6).
CAUSAL_EVICT_FROM = 16384
# A row's exponentials without ptxas's denormal fix-up (masking.exp2_ftz): 3 of the some 22 SASS instructions an
# element of a bf16 causal 4000-wide tile (sm_90: 696 → 592 a thread), and a probability under 2^-126 is 0, not
# subnormal. On the H200 (thirty-third session, exp-ftz: alternating rounds, % of a copy, bit for bit above 2^-126)
# causal rows gained: bf16 4096×4000 96.1 → 105.5, 16384×8192 92.6 → 96.1, fp32 4096×4000 107.2 → 110.3; the other
# forms did not (four cells within 0.4; softmax bf16 4096×4000 101.6 → 100.0 inside tl.exp's own spread, 95.5–101.6).
# So causal rows only (None); True takes it everywhere, False nowhere.
EXP_FTZ: bool | None = None
# A causal row (CAUSAL_BITS' rows, one a program, rows_differ) that keeps no column of its tile's second half is
# computed in a tile of half the width (with 2 halvings, of a quarter where it keeps none of the second quarter
# either), and the rest written as zeros (-inf) with no compute: the rows of a causal square keep from none to all of
# their columns, and fused's bf16 4096×4000 tile issues 592 SASS instructions a thread (sm_90) whatever its row
# keeps, a half row's branch some 360. Every width is compiled into the kernel; which one runs is the row's. On the
# H200 (fifty-fourth session, evidence/experiments/2026-12-06-session54/ab-half-tiles.py, alternating rounds, bit
# for bit, % of a copy of the op's bytes, whole / half / quarter tiles): bf16 4096×4000 98.9 / 111.0 / 110.1, its log
# 102.3 / 108.1 / 107.7; 16384×8192 95.2 / 98.7 / 99.6, its log 92.3 / 96.6 / 96.0; 8192×16384 79.2 / 79.4 / 79.9,
# its log 77.9 / 80.0 / 80.5; but fp32 (8 and 16 warps, 16 values a thread) lost: 4096×4000 110.0 / 105.3 / 103.6,
# 16384×8192 100.2 / 98.9 / 98.8, 8192×16384 98.8 / 89.0 / 88.5 (its log's quarter 66.6). So 16-bit rows halve once
# (fp16 as bf16, not measured), fp32 rows not at all. By bytes an element: halvings.
TILE_HALVINGS: dict[int, int] = {2: 1}
# A causal row's scale (> 0) folded into its exponent (CAUSAL_BITS' rows, EXP_FTZ): the max taken of x unscaled, then
# 2^(x · scale · log2 e − max · scale · log2 e), one FFMA an element where the scale's multiply, the shift's
# subtract and log2 e's multiply were three (sm_90: fused's bf16 4000-wide tile, 32 elements a thread, 592 → 536 SASS
# instructions); log_softmax's scale · x − (scale · max + log s) likewise (bf16 8192's, capped at 48 registers, 40
# bytes spilled → none). Not bit for bit the unfolded form: the exponent rounds once where it rounded twice. On the
# H100 (fifty-sixth session, evidence/experiments/2026-12-06-session56/ab-fold-scale.py, alternating rounds, % of a
# copy of the op's bytes, unfolded → folded; two runs at 4096×4000): log_softmax bf16 16384×8192 98.3 → 101.7 (its
# spill gone), 4096×4000 109.6 → 109.1 and 109.2 → 112.6, fp32 4096×4000 107.5 → 107.7 and 104.6 → 107.2, the
# others within ±0.4; but softmax fp32 4096×4000 107.8 → 106.4 and 107.8 → 104.8, bf16 4096×4000 112.4 → 107.7 and
# 111.7 → 112.2, 16384×8192 101.9 → 101.2. So log_softmax rows only. By LOG: whether to fold.
FOLD_SCALES: dict[bool, bool] = {False: False, True: True}
# A causal row (EXP_FTZ's rows) whose exponentials are taken of x unshifted: one row reduction (the sum) where there
# were two (the max, then the sum), and the max's round trip across the program's warps gone. exp(x) neither
# overflows nor loses what the output keeps while the row's sum s lies in [2^-40, 2^120]: a term flushed to 0 (x
# under -87.3) is then under 2^-126 / (2^-40 / N) of the row's largest, and 1/s a normal float; a row outside it (a
# NaN, a row of -inf, x past 88) is loaded again and shifted by its max, bit for bit as before. Not bit for bit the
# shifted form elsewhere: exp(x) rounds its argument at x's magnitude (up to 2^-24 · |x| · log2 e). The fallback's
# code holds registers through the first pass where ptxas keeps its masks and addresses live (fp32 4000: 32 → 53).
# On the H100 (fifty-seventh session, evidence/experiments/2026-12-06-session57/ab-shiftless.py, five alternating
# rounds, % of a copy of the op's bytes, shifted → unshifted): bf16 4096×4000 97.1 → 100.0, its log 88.8 → 94.0;
# bf16 8192×16384 96.0 → 99.8; but bf16 16384×8192 101.9 → 100.7 (2 bytes spilled), fp32 4096×4000 98.5 → 93.1,
# 16384×8192 101.2 → 86.0, 8192×16384 99.9 → 72.4 (64 → 101 registers). So the tiles measured faster: (bytes an
# element, BLOCK_N, log). SHIFTLESS None takes SHIFTLESS_TILES; True every causal row, False none.
SHIFTLESS: bool | None = None
SHIFTLESS_TILES = {(2, 4096, False), (2, 4096, True), (2, 16384, False)}
SHIFTLESS_LOW, SHIFTLESS_HIGH = tl.constexpr(2.0 ** -40), tl.constexpr(2.0 ** 120)


def exp_ftz(fusion: Fusion) -> bool:
    """Whether fused takes a row's exponentials without the denormal fix-up (EXP_FTZ)."""
    return fusion.causal_m is not None if EXP_FTZ is None else EXP_FTZ


@triton.jit
def fused_rows_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y,
                      scale, mask_ptr, mask_stride, causal_m,
                      BLOCK_N: tl.constexpr, ROWS: tl.constexpr,
                      HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                      EVICT: tl.constexpr = "", mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False,
                      bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0,
                      bias_group=1, bias_period=0, BIAS_SHARED: tl.constexpr = False,
                      SKIP_MASKED: tl.constexpr = False, REVERSED: tl.constexpr = False,
                      CAUSAL_BITS: tl.constexpr = False, POSITIVE_SCALE: tl.constexpr = False,
                      EXP_FTZ: tl.constexpr = False, HALVINGS: tl.constexpr = 0, FOLD_SCALE: tl.constexpr = False,
                      SHIFTLESS: tl.constexpr = False, BIAS_ONCE: tl.constexpr = False,
                      MASK_ONCE: tl.constexpr = False, MASK_SHIFT: tl.constexpr = -1,
                      BIAS_SHIFT: tl.constexpr = -1):
    first = first_row(ROWS, REVERSED)  # (REVERSED: CAUSAL, HEAVIEST_FIRST)
    if HALVINGS > 0:  # (TILE_HALVINGS: one causal row a program) the narrowest tile holding what the row keeps
        last = last_kept(first, causal_m, N)
        if last < BLOCK_N // 2:
            _fill(y_ptr, N, stride_y, first, BLOCK_N // 2, LOG)
            if HALVINGS > 1 and last < BLOCK_N // 4:
                _fill(y_ptr, N, stride_y, first, BLOCK_N // 4, LOG)
                _causal_row(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, causal_m, first, BLOCK_N // 4, HAS_SCALE,
                            LOG, EVICT, SKIP_MASKED, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE, SHIFTLESS)
            else:
                _causal_row(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, causal_m, first, BLOCK_N // 2, HAS_SCALE,
                            LOG, EVICT, SKIP_MASKED, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE, SHIFTLESS)
        else:
            _causal_row(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, causal_m, first, BLOCK_N, HAS_SCALE, LOG,
                        EVICT, SKIP_MASKED, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE, SHIFTLESS)
    else:
        _rows(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m, first,
              BLOCK_N, ROWS, HAS_SCALE, HAS_MASK, CAUSAL, LOG, EVICT, mask_group, mask_period, MASK_SHARED,
              bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN, bias_group, bias_period, BIAS_SHARED, SKIP_MASKED,
              CAUSAL_BITS, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE, SHIFTLESS, BIAS_ONCE, MASK_ONCE,
              MASK_SHIFT, BIAS_SHIFT)


@triton.jit
def _causal_row(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, causal_m, first, WIDTH: tl.constexpr,
                HAS_SCALE: tl.constexpr, LOG: tl.constexpr, EVICT: tl.constexpr, SKIP_MASKED: tl.constexpr,
                POSITIVE_SCALE: tl.constexpr, EXP_FTZ: tl.constexpr, FOLD_SCALE: tl.constexpr,
                SHIFTLESS: tl.constexpr):
    """Row `first`'s columns 0 … WIDTH − 1, causal (CAUSAL_BITS), no keep-mask or bias."""
    _rows(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, mask_ptr=x_ptr, mask_stride=0, causal_m=causal_m,
          first=first, BLOCK_N=WIDTH, ROWS=1, HAS_SCALE=HAS_SCALE, HAS_MASK=False, CAUSAL=True, LOG=LOG, EVICT=EVICT,
          mask_group=1, mask_period=0, MASK_SHARED=False, bias_ptr=None, bias_stride=0, HAS_BIAS=False, BIAS_MIN=0.0,
          bias_group=1, bias_period=0, BIAS_SHARED=False, SKIP_MASKED=SKIP_MASKED, CAUSAL_BITS=True,
          POSITIVE_SCALE=POSITIVE_SCALE, EXP_FTZ=EXP_FTZ, FOLD_SCALE=FOLD_SCALE, SHIFTLESS=SHIFTLESS)


@triton.jit
def _fill(y_ptr, N, stride_y, first, WIDTH: tl.constexpr, LOG: tl.constexpr):
    """Row `first`'s columns WIDTH … 2 · WIDTH − 1 (what of them lies inside the row) as zeros (-inf for LOG); a
    program of one row (ROWS = 1) is only launched for a row < M."""
    cols = WIDTH + tl.arange(0, WIDTH)
    fill = tl.full([WIDTH], -float("inf") if LOG else 0.0, tl.float32)
    tl.store(y_ptr + first.to(tl.int64) * stride_y + cols, fill.to(y_ptr.dtype.element_ty), mask=cols < N)


@triton.jit
def _rows(x_ptr, y_ptr, M, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m, first,
          BLOCK_N: tl.constexpr, ROWS: tl.constexpr, HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr,
          CAUSAL: tl.constexpr, LOG: tl.constexpr, EVICT: tl.constexpr, mask_group, mask_period,
          MASK_SHARED: tl.constexpr, bias_ptr, bias_stride, HAS_BIAS: tl.constexpr, BIAS_MIN: tl.constexpr,
          bias_group, bias_period, BIAS_SHARED: tl.constexpr, SKIP_MASKED: tl.constexpr, CAUSAL_BITS: tl.constexpr,
          POSITIVE_SCALE: tl.constexpr, EXP_FTZ: tl.constexpr, FOLD_SCALE: tl.constexpr = False,
          SHIFTLESS: tl.constexpr = False, BIAS_ONCE: tl.constexpr = False,
          MASK_ONCE: tl.constexpr = False, MASK_SHIFT: tl.constexpr = -1, BIAS_SHIFT: tl.constexpr = -1):
    """y's rows first … first + ROWS − 1, columns 0 … BLOCK_N − 1 (what of them lies inside the row)."""
    rows = first + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows < M)[:, None] & (cols < N)[None, :]
    # 64-bit row offsets: row · stride passes 2^31 on tensors of more than 2^31 elements.
    rows = rows.to(tl.int64)
    skipped = False
    if SKIP_MASKED:  # (CAUSAL) a program whose rows all keep no column writes their zeros (-inf) and reads nothing
        skipped = keeps_none(first, ROWS, causal_m, N)
    if SHIFTLESS:  # (EXP_FTZ) a pass of exp(x) unshifted: the sum its one row reduction, where the sums allow it
        if skipped:
            y = tl.full([ROWS, BLOCK_N], -float("inf") if LOG else 0.0, tl.float32)
            _store_tile(y_ptr, stride_y, rows, cols, inside, y)
        else:
            x = _tile_input(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                            HAS_SCALE, HAS_MASK, CAUSAL, EVICT, mask_group, mask_period, MASK_SHARED, bias_ptr,
                            bias_stride, HAS_BIAS, BIAS_MIN, bias_group, bias_period, BIAS_SHARED, CAUSAL_BITS,
                            POSITIVE_SCALE, FOLD_SCALE)
            to_exponent = 1.4426950408889634
            if FOLD_SCALE:
                to_exponent = tl.cast(scale, tl.float32) * 1.4426950408889634
            num = exp2_ftz(x * to_exponent)
            s = tl.sum(num, axis=1)
            # (each branch stores its own y: one y for both kept the fallback's registers live in the first pass)
            if tl.min(((s >= SHIFTLESS_LOW) & (s <= SHIFTLESS_HIGH)).to(tl.int32), axis=0) > 0:
                if LOG and FOLD_SCALE:
                    y = x * tl.cast(scale, tl.float32) - log_of_sum(s)[:, None]
                elif LOG:
                    y = x - log_of_sum(s)[:, None]
                else:
                    y = num * (1.0 / s)[:, None]
                _store_tile(y_ptr, stride_y, rows, cols, inside, y)
            else:  # loaded again and shifted by its max
                y = _softmax_tile(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                                  HAS_SCALE, HAS_MASK, CAUSAL, LOG, EVICT, mask_group, mask_period, MASK_SHARED,
                                  bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN, bias_group, bias_period, BIAS_SHARED,
                                  CAUSAL_BITS, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE)
                _store_tile(y_ptr, stride_y, rows, cols, inside, y)
    else:
        if skipped:
            y = tl.full([ROWS, BLOCK_N], -float("inf") if LOG else 0.0, tl.float32)
        else:
            y = _softmax_tile(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                              HAS_SCALE, HAS_MASK, CAUSAL, LOG, EVICT, mask_group, mask_period, MASK_SHARED,
                              bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN, bias_group, bias_period, BIAS_SHARED,
                              CAUSAL_BITS, POSITIVE_SCALE, EXP_FTZ, FOLD_SCALE, BIAS_ONCE, MASK_ONCE,
                              MASK_SHIFT, BIAS_SHIFT)
        _store_tile(y_ptr, stride_y, rows, cols, inside, y)


@triton.jit
def _store_tile(y_ptr, stride_y, rows, cols, inside, y):
    """The tile's y, in y's dtype, into rows `rows`, columns `cols` (where inside)."""
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=inside)


@triton.jit
def _softmax_tile(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                  HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                  EVICT: tl.constexpr, mask_group, mask_period, MASK_SHARED: tl.constexpr, bias_ptr, bias_stride,
                  HAS_BIAS: tl.constexpr, BIAS_MIN: tl.constexpr, bias_group, bias_period, BIAS_SHARED: tl.constexpr,
                  CAUSAL_BITS: tl.constexpr = False, POSITIVE_SCALE: tl.constexpr = False,
                  EXP_FTZ: tl.constexpr = False, FOLD_SCALE: tl.constexpr = False, BIAS_ONCE: tl.constexpr = False,
                  MASK_ONCE: tl.constexpr = False, MASK_SHIFT: tl.constexpr = -1,
                  BIAS_SHIFT: tl.constexpr = -1):
    """The softmax (log_softmax) of a ROWS × BLOCK_N tile of x's rows `rows`, in fp32, shifted by each row's max."""
    x = _tile_input(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside, HAS_SCALE,
                    HAS_MASK, CAUSAL, EVICT, mask_group, mask_period, MASK_SHARED, bias_ptr, bias_stride, HAS_BIAS,
                    BIAS_MIN, bias_group, bias_period, BIAS_SHARED, CAUSAL_BITS, POSITIVE_SCALE, FOLD_SCALE, BIAS_ONCE,
                    MASK_ONCE, MASK_SHIFT, BIAS_SHIFT)
    row_max = tl.max(x, axis=1)
    # Shift by the max so exp never overflows; an all -inf row shifts by 0 so that it gives zeros, not NaN.
    shift = tl.where(row_max == -float("inf"), 0.0, row_max)[:, None]
    if FOLD_SCALE:  # 2^(x · scale · log2 e − shift · scale · log2 e), without the fix-up as EXP_FTZ's
        to_exponent = tl.cast(scale, tl.float32) * 1.4426950408889634
        num = exp2_ftz(x * to_exponent - shift * to_exponent)
    elif EXP_FTZ:  # (EXP_FTZ) no denormal fix-up: a probability under 2^-126 is 0
        num = exp2_ftz((x - shift) * 1.4426950408889634)
    else:
        num = tl.exp(x - shift)
    norm = normalizer(tl.sum(num, axis=1), LOG)[:, None]
    if LOG and FOLD_SCALE:  # scale · x − (scale · shift + log s): one FFMA an element
        scale = tl.cast(scale, tl.float32)
        return x * scale - (shift * scale + norm)
    elif LOG:
        return normalized(x, shift, norm, LOG)
    else:
        return num * norm  # the exponentials already computed: no second exp


@triton.jit
def _tile_input(x_ptr, stride_x, N, scale, mask_ptr, mask_stride, causal_m, rows, cols, inside,
                HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, EVICT: tl.constexpr,
                mask_group, mask_period, MASK_SHARED: tl.constexpr, bias_ptr, bias_stride, HAS_BIAS: tl.constexpr,
                BIAS_MIN: tl.constexpr, bias_group, bias_period, BIAS_SHARED: tl.constexpr,
                CAUSAL_BITS: tl.constexpr, POSITIVE_SCALE: tl.constexpr, FOLD_SCALE: tl.constexpr,
                BIAS_ONCE: tl.constexpr = False, MASK_ONCE: tl.constexpr = False, MASK_SHIFT: tl.constexpr = -1,
                BIAS_SHIFT: tl.constexpr = -1):
    """The tile's x in fp32, scaled (not under FOLD_SCALE), masked and biased: -inf in every column not kept
    (masked out, past a causal row's diagonal, past the row's end). MASK_SHIFT, BIAS_SHIFT: mask_rows's
    GROUP_SHIFT of a shared mask's and bias's rows."""
    # Padding lanes load -inf: they never win the max and add exp(-inf) = 0 to the sum.
    # EVICT: "" unless FORWARD_EVICT (or scripts/eviction.py and scripts/l2-after.py) set it
    read = inside
    if CAUSAL:  # a causal row is not read past its diagonal: whole 16-byte vectors, masked below to the column
        read = kept_vectors(x_ptr, rows[:, None], cols[None, :], inside, causal_m, N)
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=read, other=-float("inf"),
                eviction_policy=EVICT)
    x = x.to(tl.float32)  # accumulate in fp32 whatever the input dtype
    mask_ptr, mask_stride = mask_rows(mask_ptr, mask_stride, _reading_rows(rows, MASK_ONCE), mask_group,
                                      mask_period, MASK_SHARED, MASK_SHIFT)
    if HAS_BIAS:  # only then: Triton 3.6 cannot return bias_ptr's None from a function
        bias_ptr, bias_stride = mask_rows(bias_ptr, bias_stride, _reading_rows(rows, BIAS_ONCE), bias_group,
                                          bias_period, BIAS_SHARED, BIAS_SHIFT)
    # (FOLD_SCALE: a scale > 0 and EXP_FTZ) x stays unscaled, its max too: scale · (x − max) is one FFMA an element
    x = scale_and_mask(x, rows[:, None], cols[None, :], inside, scale, mask_ptr, mask_stride, causal_m, N,
                       HAS_SCALE and not FOLD_SCALE, HAS_MASK, CAUSAL, bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN,
                       CAUSAL_BITS, POSITIVE_SCALE, BIAS_ONCE, MASK_ONCE)
    return x


@triton.jit
def _reading_rows(rows, ONCE: tl.constexpr):
    """The rows whose shared mask (bias) rows a tile reads: each of its rows, or (ONCE: mask_once, bias_once) the
    first alone, whose row all of them share."""
    if ONCE:
        return tl.min(rows, axis=0)
    else:
        return rows[:, None]


def launch_config(M: int, N: int, dtype: torch.dtype = torch.float32, fusion: Fusion = PLAIN) -> dict:
    """BLOCK_N, ROWS and num_warps for an M×N input of `dtype` under `fusion` (a bias added or not; also what
    `explain` reports); one dict for every M of a class, shared: read it, do not change it."""
    # ROWS ≤ a program's elements: more rows change nothing
    return _launch_config(*config_shape(M, N, MIN_BYTES_PER_PROGRAM // dtype.itemsize), dtype.itemsize,
                          fusion.bias is not None)


@lru_cache(maxsize=1024)
def _launch_config(M: int, N: int, itemsize: int = 4, biased: bool = False) -> dict:
    block_n = next_power_of_2(N)
    rows, program_elems = 1, MIN_BYTES_PER_PROGRAM // itemsize
    if block_n < program_elems:
        rows = min(program_elems // block_n, next_power_of_2(M))
    program_bytes = block_n * rows * itemsize
    if biased and BIASED_WARPS_BYTES[0] <= program_bytes <= BIASED_WARPS_BYTES[1]:
        num_warps = min(32, program_bytes // BIASED_BYTES_PER_WARP)
    elif program_bytes <= FOUR_WARPS_BYTES:
        num_warps = 4
    else:
        num_warps = next(w for limit, w in NUM_WARPS_BY_BLOCK if block_n * rows <= limit)
    return {"BLOCK_N": block_n, "ROWS": rows, "num_warps": num_warps}


def forward_evict(N: int, fusion: Fusion) -> str:
    """The loads' eviction policy for rows of N (kernels.FORWARD_EVICT), plain for causal rows narrower than
    CAUSAL_EVICT_FROM (or of a width torch.compile traces: a SymInt)."""
    evict = forward_evict_setting()
    if fusion.causal_m is not None and not (isinstance(N, int) and N >= CAUSAL_EVICT_FROM):
        return ""
    return evict


def launch(x: torch.Tensor, fusion: Fusion = PLAIN, config: dict | None = None) -> tuple[torch.Tensor, Launch]:
    """config: BLOCK_N, ROWS and num_warps to launch with (None: launch_config's; scripts/fused-configs.py)."""
    M, N = x.shape
    y = output_like(x, fusion)
    causal_bits = {"CAUSAL_BITS": True} if CAUSAL_BITS and fusion.causal_m is not None and fusion.mask is None \
        and fusion.bias is None else {}
    shifts = {}  # (only for a shared mask or bias: a plain call passes no more arguments)
    if GROUP_SHIFTS and fusion.mask_shared:
        shifts["MASK_SHIFT"] = group_shift(fusion.mask_group, fusion.mask_period)
    if GROUP_SHIFTS and fusion.bias_shared:
        shifts["BIAS_SHIFT"] = group_shift(fusion.bias_group, fusion.bias_period)
    if config is None:
        config = launch_config(M, N, x.dtype, fusion)
        # (N is a SymInt while torch.compile traces a call: not hashable, and no cap is measured for it)
        cap = CAUSAL_REGISTERS.get((x.element_size(), N, fusion.log)) if causal_bits and isinstance(N, int) else None
        cap = cap or shifted_bias_cap(x, config["BLOCK_N"], fusion.log, shifts.get("BIAS_SHIFT", -1))
        config = {**config, "maxnreg": cap} if cap else config
        evict = forward_evict(N, fusion)
        config = {**config, "EVICT": evict} if evict else config
    grid = (cdiv(M, config["ROWS"]),)
    skip = {"SKIP_MASKED": True} if SKIP_MASKED_PROGRAMS and (fusion.causal_m or 0) > N else {}
    reversed_rows = {"REVERSED": True} if HEAVIEST_FIRST and rows_differ(fusion.causal_m, N) else {}
    positive = {"POSITIVE_SCALE": True} if POSITIVE_SCALES and scaled_alone(fusion) and fusion.scale > 0 else {}
    ftz = {"EXP_FTZ": True} if exp_ftz(fusion) else {}
    halving = TILE_HALVINGS.get(x.element_size(), 0) if causal_bits and config["ROWS"] == 1 and reversed_rows else 0
    halvings = {"HALVINGS": halving} if halving else {}
    fold = {"FOLD_SCALE": True} if FOLD_SCALES[fusion.log] and causal_bits and ftz and fusion.scale > 0 else {}
    shiftless = {"SHIFTLESS": True} if unshifted(x, config["BLOCK_N"], fusion) and causal_bits and ftz else {}
    once = {"BIAS_ONCE": True} if bias_once(fusion, config["ROWS"]) else {}
    once |= {"MASK_ONCE": True} if mask_once(fusion, config["ROWS"]) else {}
    compiled = launch_kernel(fused_rows_kernel, grid, x, y, M, N, x.stride(0), y.stride(0), **fusion_args(fusion, x),
                             **config, **skip, **reversed_rows, **causal_bits, **positive, **ftz, **halvings, **fold,
                             **shiftless, **once, **shifts)
    return y, Launch(config, [compiled])


# A shared mask's (bias's) row found by a shift where its groups are powers of two rows (masking.group_shift), not
# a division and a modulo by runtime values: on the H200 the key-padded bf16 rows fused runs are bound by issuing
# their instructions (seventieth session, docs/perf-notes.md).
GROUP_SHIFTS = True
# With a shared bias's row found by that shift, log_softmax's fp32 tile of 16384 (16 warps) takes 71 registers where
# the unshifted tile takes 64 (under Triton 3.8; 3.6's takes 64 either way): one program an SM where there were two
# (65536 / (512 · 72)). Capped at 64 (ptxas's maxnreg) it spills nothing (compiled for sm_90); no other shifted tile
# of the default grid crosses a program an SM. On the H100 (seventy-ninth session, bar-biased-rows64-log-h100-s79:
# biased rows/64, 8192×16384) it ran at 71.3 % of its roofline, torch.compile at 79.1, the forward (60 registers) at
# 96.6. (bytes an element, BLOCK_N, log): cap.
SHIFTED_BIAS_REGISTERS: dict[tuple[int, int, bool], int] = {(4, 16384, True): 64}


def shifted_bias_cap(x: torch.Tensor, block_n: int, log: bool, bias_shift: int) -> int | None:
    """SHIFTED_BIAS_REGISTERS' cap for a tile whose shared bias's row is found by a shift (the launch's BIAS_SHIFT,
    -1 where none), else None."""
    if bias_shift < 0 or not isinstance(block_n, int):
        return None
    return SHIFTED_BIAS_REGISTERS.get((x.element_size(), block_n, log))


# A program's rows that share one row of a bias ([B, 1, 1, S] over [B, H, S, S] scores) or of a keep-mask (a
# key-padding mask) read it once, for all of them, and broadcast it (BIAS_ONCE, MASK_ONCE; through shared memory
# where the row's layout is not the tile's, compiled for sm_90), not once a row (issue 26, the sixty-seventh
# session's bias-once.patch and the seventieth's mask-once: docs/perf-notes.md).
BIAS_ONCE_ROWS = False
MASK_ONCE_ROWS = False


def bias_once(fusion: Fusion, rows: int) -> bool:
    """Whether a program of `rows` rows (first row a multiple of rows) reads a shared bias's row once (BIAS_ONCE):
    its rows lie in one group of the bias's rows (rows divides bias_group), and no causal mask cuts them."""
    return BIAS_ONCE_ROWS and fusion.bias_shared and one_group(rows, fusion.bias_group, fusion)


def mask_once(fusion: Fusion, rows: int) -> bool:
    """Whether a program of `rows` rows reads a shared keep-mask's row once (MASK_ONCE), as bias_once for a bias."""
    return MASK_ONCE_ROWS and fusion.mask_shared and one_group(rows, fusion.mask_group, fusion)


def one_group(rows: int, group: int, fusion: Fusion) -> bool:
    """Whether a program's `rows` rows (more than one, its first a multiple of them) lie in one group of `group`
    rows, no causal mask cutting them."""
    return rows > 1 and group % rows == 0 and fusion.causal_m is None


def unshifted(x: torch.Tensor, block_n: int, fusion: Fusion) -> bool:
    """Whether a causal row's tile takes its exponentials of x unshifted (SHIFTLESS); not where torch.compile traces
    a width (a SymInt: not hashable, and its tile not measured)."""
    if SHIFTLESS is not None:
        return SHIFTLESS
    return isinstance(block_n, int) and (x.element_size(), block_n, fusion.log) in SHIFTLESS_TILES


def scaled_alone(fusion: Fusion) -> bool:
    """A scale with nothing else fused but a log."""
    return fusion.scale != 1.0 and fusion.mask is None and fusion.causal_m is None and fusion.bias is None


VARIANT = Variant(
    name="fused",
    summary="one program per row (several for narrow rows), the row in registers: one read, one write",
    launch=launch,
    traffic=one_pass_traffic,
    triton=True,
    max_n=MAX_N,
)
