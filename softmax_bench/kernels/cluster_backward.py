"""cluster's backward: the rows of y and dy held on chip across a thread-block cluster; one read of each, one write.

Laid out as the forward lays out x (kernels/cluster.py: CTA c of a row's cluster holds the `step` lanes from c·step,
16 bytes a thread; 16-bit values packed two to a register), but a thread holds lanes of two rows, so each gets half
of the forward's elements a thread (cluster.fitting_config with rows=2): rows of up to 262144 elements. Each CTA
sums dy·y over its lanes (log_softmax: dy), pushes its partial sum into every peer's shared memory as the forward
pushes (max, sum), adds the C partial sums and writes dx = scale·y·(dy − Σ) (log_softmax: scale·(dy − e^y·Σ), zero
where the fusion masked the forward's input). Lanes outside the row read as 0: they add nothing to the sum.

Needs Triton ≥ 3.8 and an sm_90 GPU, as the forward; elsewhere it says so and `backward_for` takes two_pass's.
"""

from __future__ import annotations

import dataclasses
from functools import cache, partial

import torch

from . import PLAIN, Backward, Fusion, Launch, backward_traffic, expanded_mask_traffic, launch_kernel, output_like
from . import cluster as forward_cluster
from .aligned import same_alignment, vector_elems, window_lanes
from .cluster import (CAPACITY, ClusterConfig, fitting_config, gluon, launch_options, mask_in_bits, mask_on_grid,
                      packed_ptx, phase_copy_passes, phases_wanted, settings_of, unsupported_width, why_not_here,
                      window_constexprs)
from .masking import fusion_args, mask_expanded, phased

# A thread holds lanes of y and of dy: half the forward's window.
BACKWARD_CAPACITY = CAPACITY // 2
# The loads keep y and dy in L1 and L2 ahead of other lines, as fused's backward's do (kernels/fused_backward.py
# says what that costs the next kernel): 1–2 % faster at 16384–65536 on the H200, neither faster nor slower at
# 151936 and 262144 (scripts/eviction.py, docs/perf-notes.md).
EVICT = "evict_last"
# log_softmax's dx with a keep-mask or causal rows (LEAN_KEEP): each lane's keep as one int32, > 0 where kept —
# the mask's bytes read a vector at a time where the mask lies on y's grid, a causal row's diagonal compared in 32
# bits, no bounds (the store has them) — and the exponential without the denormal fix-up (e^y under 2^-126 is 0,
# against Σ: dx as before unless |dy| is under some 1e-30). Compiled for sm_90, bf16 131072: causal 1576 → 992 SASS
# instructions a thread and 167 → 96 registers, a keep-mask 1720 → 976 and 168 → 88; the log alone takes 952 and
# 83. Measured on the H200 (thirty-fourth session, next.sh lean-keep, % of a copy, bit for bit): bf16 causal
# 8192×16384 82.6 → 99.1, 4096×128256 66.2 → 103.4, 512×262144 57.4 → 93.0; a keep-mask 81.1 → 103.8, 45.1 → 98.1,
# 41.8 → 95.0; fp32 with LATE_Y beside it where LATE_Y_CELLS says (docs/perf-notes.md).
LEAN_KEEP = True
# y not held across the exchange (LATE_Y) but read after it: log_softmax's row sum is dy's alone, so its y is read
# then only; softmax's sum reads both, so its y is read twice, the second time from L2 (a wave's rows of y, some
# 8 MB at fp32 262144, stay there). Compiled for sm_90, fp32 262144 in 16 × 8: the log 154 → 102 registers, softmax
# 156 → 130, and 128 under LATE_Y_REGISTERS' cap without a spill (156 capped so spills 200 bytes). Fewer registers
# are not always faster: the reads of y then wait on the exchange. Measured on the H200 (thirty-fourth session,
# next.sh lean-keep, % of a copy, with LEAN_KEEP where it applies) it gained at the cells of LATE_Y_CELLS and lost
# elsewhere: bf16 4096×128256 causal 103.4 → 91.3, a keep-mask 98.1 → 62.7; fp32 512×262144 causal 92.4 → 78.8;
# softmax fp32 1024×131072 103.7 → 93.9. None: at those cells only; True or False: everywhere or nowhere.
LATE_Y: bool | None = None
# Where LATE_Y measured ahead: (dtype, N, the log's keep: "causal", "mask" or None), % of a copy: bf16 16384 causal
# 99.1 → 103.6, 131072 a keep-mask 84.5 → 87.2; fp32 128256 causal 87.3 → 95.2, a keep-mask 80.7 → 102.2, fp32
# 262144 a keep-mask 74.8 → 88.0, the scaled log without one 87.1 → 88.1; fp32 131072 a keep-mask 93.5 % of the
# roofline in its grid. Not fp32 131072 causal (103.0 → 91.2), though it shares 128256's pieces and warps: the
# width, not the config, decides.
# bf16 131072 a keep-mask and fp32 262144 without one are staged instead (STAGED_AT).
LATE_Y_CELLS = {(torch.bfloat16, 16384, "causal"), (torch.float32, 128256, "causal"), (torch.float32, 128256, "mask"),
                (torch.float32, 131072, "mask"), (torch.float32, 262144, "mask")}
LATE_Y_REGISTERS: dict[tuple[torch.dtype, int], int] = {(torch.float32, 262144): 128}  # softmax's, with LATE_Y
# Where a log_softmax's backward with LATE_Y measured faster in other CTAs and warps than fitting_config's:
# LATE_Y_CELLS' cell: (CTAs, warps, registers' cap). The keep-mask's fp32 512×262144 in 16 × 8 takes 114 registers,
# two CTAs of 8 warps an SM; in 16 × 16 capped at 64 (16 bytes spilled), two CTAs of 16. On the H200 (sixty-sixth
# session, evidence/experiments/2026-12-06-session66, % of the roofline): 87.3, 87.7 → 96.9, 96.8 (16 × 16
# uncapped, 72 registers, one CTA an SM: 79.3). Not the other backward forms at that width: softmax, scaled,
# scaled-masked, causal and biased and the logs of scaled, causal and biased lost 0.7–2.6 in it.
LATE_Y_SHAPES: dict[tuple[torch.dtype, int, str | None], tuple[int, int, int | None]] = {
    (torch.float32, 262144, "mask"): (16, 16, 64)}
# log_softmax's keep-mask read with y and dy, before the exchange, and applied to dy there (MASK_EARLY, with
# LEAN_KEEP): dy is 0 where masked, after the row's sum has taken it, and y is -inf there (the forward's), so dx is
# 0 there with no keep after the exchange; causal rows still compare their diagonal. Without it, the mask is read
# after the exchange, when a CTA has nothing else in flight: with LEAN_KEEP (thirty-fourth session) the masked
# log's backward ran 6–23 points of a copy under the causal one's at the same registers (fp32 512×262144 74.1
# against 92.4, 8192×50257 80.7 against causal's 96.9 in its grid, bf16 1024×131072 84.5 against 102.2). On the
# H200 (thirty-eighth session, ab-staged.py, % of a copy, bit for bit against as it was):
# fp32 8192×50257 80.8 → 105.0, 2048×151936 86.4 → 104.0, bf16 1024×131072 87.0 → 94.8 (102.6 staged too); with
# LATE_Y (fp32 512×262144) 88.0 → 87.2, a loss: there the mask's read after the exchange overlaps y's. None: where
# LATE_Y does not apply; True or False: everywhere or nowhere. A row whose Σ dy is not finite is NaN at its masked
# positions too (0·NaN), where torch gives them 0.
MASK_EARLY: bool | None = None
# One of the two rows staged in shared memory by asynchronous copies (cp.async: no registers while in flight), so
# that a thread holds the other alone across the exchange: softmax's dy, read from there by the row's sum and again
# by dx; log_softmax's y, read by dx alone (its sum is dy's). fp32 512×262144 in 16 CTAs of 8 warps holds 64 + 64
# fp32 values a thread at 156 registers: one CTA an SM, nothing to hide its exchange (scaled 88.1–90.3 % of a copy
# in eight runs, under issue 26's 90); LATE_Y's read of y again from L2 after it measured no better (89.8 → 88.6).
# Compiled for sm_90 (thirty-fifth session): softmax 156 → 119 registers, two CTAs an SM, 64 KB of shared memory a
# CTA. Measured on the H200 (thirty-eighth session, ab-staged.py, % of a copy): fp32 512×262144 scaled 91.3 → 93.5,
# scaled-masked 91.6 → 93.8, the scaled log 88.9 → 95.0 (with LATE_Y as it was), bf16 512×262144 scaled 101.1 →
# 103.1, the masked log's bf16 1024×131072 94.8 → 102.6 (with MASK_EARLY); lost at the masked log's fp32 512×262144
# (LATE_Y 88.0 → 87.0, with MASK_EARLY 84.4) and softmax's fp32 1024×131072 (105.5 → 103.7). Then at the cells it
# changed unmeasured: the causal log's fp32 512×262144 93.1 → 94.1, bf16 512×262144 93.1 → 103.1, bf16 1024×131072
# 102.8 → 103.4; but softmax's bf16 1024×131072 lost (scaled 103.9 → 101.7, causal 104.2 → 102.1). So at the widths
# in STAGED_AT (dtype, N) for softmax and log_softmax alike, at STAGED_LOG_AT's for log_softmax alone, and not where
# LATE_Y applies (late_y).
STAGED_AT: frozenset[tuple[torch.dtype, int]] = frozenset({(torch.float32, 262144), (torch.bfloat16, 262144)})
STAGED_LOG_AT: frozenset[tuple[torch.dtype, int]] = frozenset({(torch.bfloat16, 131072)})

if gluon is not None:
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import cluster, mbarrier

    from .cluster import (LOG2E, SELECT_BITS, SELECT_PACKED, _end_bits_kept, _keep_bits, async_copy, end_vectors,
                          ends_layout, exchange_barrier, kept, last_kept_column, load_lanes, one_a_cta, piece, push,
                          receive_buffer, received, row_layout, row_of, row_window, stage, staging_buffers,
                          store_lanes, thread_sums, window_bounds)

    # dx from 16-bit y (a) and dy (b) held packed, the row's sum s0 and the scale s1, in fp32; log_softmax's is 0
    # where s2 (kept) is 0
    SOFTMAX_STEP = "sub.f32 b{h}, b{h}, {s0}; mul.f32 a{h}, a{h}, b{h}; mul.f32 a{h}, a{h}, {s1}; "
    LOG_STEP = ("mul.f32 a{h}, a{h}, 0f3FB8AA3B; ex2.approx.f32 a{h}, a{h}; "  # e^y, as 2^(y·log2 e)
                "mul.f32 a{h}, a{h}, {s0}; sub.f32 a{h}, b{h}, a{h}; mul.f32 a{h}, a{h}, {s1}; "
                "setp.eq.f32 p, {s2}, 0f00000000; selp.f32 a{h}, 0f00000000, a{h}, p; ")
    # the same with {s2} an int32, > 0 where kept, and e^y flushed to 0 under 2^-126 (LEAN_KEEP)
    LEAN_EXP_STEP = ("mul.f32 a{h}, a{h}, 0f3FB8AA3B; ex2.approx.ftz.f32 a{h}, a{h}; "
                     "mul.f32 a{h}, a{h}, {s0}; sub.f32 a{h}, b{h}, a{h}; mul.f32 a{h}, a{h}, {s1}; ")
    LEAN_LOG_STEP = LEAN_EXP_STEP + "setp.le.s32 p, {s2}, 0; selp.f32 a{h}, 0f00000000, a{h}, p; "
    SOFTMAX_BF16 = gl.constexpr(packed_ptx("bf16", 2, SOFTMAX_STEP))
    SOFTMAX_FP16 = gl.constexpr(packed_ptx("f16", 2, SOFTMAX_STEP))
    LOG_BF16 = gl.constexpr(packed_ptx("bf16", 2, LOG_STEP))
    LOG_FP16 = gl.constexpr(packed_ptx("f16", 2, LOG_STEP))
    LEAN_LOG_BF16 = gl.constexpr(packed_ptx("bf16", 2, LEAN_LOG_STEP))
    LEAN_LOG_FP16 = gl.constexpr(packed_ptx("f16", 2, LEAN_LOG_STEP))
    # ... and with no keep: dy is 0 where masked already (MASK_EARLY)
    DY_KEPT_LOG_BF16 = gl.constexpr(packed_ptx("bf16", 2, LEAN_EXP_STEP))
    DY_KEPT_LOG_FP16 = gl.constexpr(packed_ptx("f16", 2, LEAN_EXP_STEP))
    # dy, 0 where a bool mask's byte (0 or 1) is 0, four values at a time (MASK_EARLY): the forward's select of x
    # (SELECT_PACKED) filling 0 for 16-bit dy; for fp32 dy each byte's sign spread over a 32-bit mask, one and each
    ZERO_MASKED_16 = gl.constexpr(SELECT_PACKED.replace("NEG_INF", "0"))
    ZERO_MASKED_F32 = gl.constexpr("{ .reg .b32 m, k; mul.lo.u32 m, $8, 255; " + "".join(
        f"prmt.b32 k, m, 0, 0x{f'{8 + i:X}' * 4}; and.b32 ${i}, ${4 + i}, k; " for i in range(4)) + "}")
    # ... from the vector's keep bits (MASK_BITS, 16-bit dy): the forward's SELECT_BITS filling 0
    ZERO_BITS_16 = gl.constexpr(SELECT_BITS.replace("NEG_INF", "0"))

    @gluon.jit
    def _terms(y, dy, LOG: gl.constexpr):
        """The terms of a row's sum, in fp32: dy·y for softmax, dy for log_softmax."""
        if LOG:
            return dy.to(gl.float32)
        else:
            return y.to(gl.float32) * dy.to(gl.float32)

    @gluon.jit
    def _input_gradient(y, dy, row_sum, scale):
        """softmax's dx in y's dtype from y and dy as held and the row's sum: scale·y·(dy − Σ). softmax's y is 0
        where the forward masked x out, and so is dx. In one piece of inline PTX for 16-bit values, so that the
        compiler cannot keep fp32 copies of y and dy alive across the exchange (it would share a plain widening with
        the partial sum's: cluster.packed_ptx)."""
        if y.dtype == gl.float32:
            return y * (dy - row_sum) * scale
        elif y.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(SOFTMAX_BF16, "=r,r,r,r,r,r,r", [y, dy, row_sum, scale], dtype=y.dtype,
                                             is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise(SOFTMAX_FP16, "=r,r,r,r,r,r,r", [y, dy, row_sum, scale], dtype=y.dtype,
                                             is_pure=True, pack=2)

    @gluon.jit
    def _log_input_gradient(y, dy, row_sum, scale, kept):
        """log_softmax's dx, as _input_gradient's: scale·(dy − e^y·Σ), 0 where not `kept` (y is -inf there, e^y = 0,
        and dx would be dy: torch's masked_fill gives those positions no gradient either)."""
        if y.dtype == gl.float32:
            return gl.where(kept, (dy - gl.exp2(y * LOG2E) * row_sum) * scale, 0.0)
        elif y.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(LOG_BF16, "=r,r,r,r,r,r,r,r,r", [y, dy, row_sum, scale,
                                                                              gl.where(kept, 1.0, 0.0)],
                                             dtype=y.dtype, is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise(LOG_FP16, "=r,r,r,r,r,r,r,r,r", [y, dy, row_sum, scale,
                                                                              gl.where(kept, 1.0, 0.0)],
                                             dtype=y.dtype, is_pure=True, pack=2)

    @gluon.jit
    def _lean_log_input_gradient(y, dy, row_sum, scale, keep):
        """_log_input_gradient's dx with `keep` an int32 a lane, > 0 where kept, and e^y flushed to 0 under 2^-126
        (LEAN_KEEP); keep None: no select (MASK_EARLY: dy is 0 where masked, y -inf)."""
        if y.dtype == gl.float32:
            e = gl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [y * LOG2E], dtype=gl.float32,
                                          is_pure=True, pack=1)
            if keep is None:
                dx = (dy - e * row_sum) * scale
            else:
                dx = gl.where(keep > 0, (dy - e * row_sum) * scale, 0.0)
            return dx
        elif keep is None and y.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(DY_KEPT_LOG_BF16, "=r,r,r,r,r,r,r", [y, dy, row_sum, scale],
                                             dtype=y.dtype, is_pure=True, pack=2)
        elif keep is None:
            return gl.inline_asm_elementwise(DY_KEPT_LOG_FP16, "=r,r,r,r,r,r,r", [y, dy, row_sum, scale],
                                             dtype=y.dtype, is_pure=True, pack=2)
        elif y.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(LEAN_LOG_BF16, "=r,r,r,r,r,r,r,r,r", [y, dy, row_sum, scale, keep],
                                             dtype=y.dtype, is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise(LEAN_LOG_FP16, "=r,r,r,r,r,r,r,r,r", [y, dy, row_sum, scale, keep],
                                             dtype=y.dtype, is_pure=True, pack=2)

    @gluon.jit
    def _lane_keeps(mask_row, lanes, move, EVEN: gl.constexpr, MASK_BITS: gl.constexpr, VEC: gl.constexpr):
        """The keep-mask's 0 or 1 of each lane of a piece, int32, from mask_row (its row's window, as y's): its bytes
        a vector at a time, or (MASK_BITS) its copy's byte of bits a vector."""
        if MASK_BITS:
            bits, place = _keep_bits(mask_row, lanes, move, VEC, "")
            return (bits >> place) & 1
        else:
            return load_lanes(mask_row, lanes, move, 0, EVEN, "").to(gl.int32)

    @gluon.jit
    def _lean_keep(cols, lanes, move, row, N, mask_row, causal_m, EVEN: gl.constexpr, HAS_MASK: gl.constexpr,
                   CAUSAL: gl.constexpr, MASK_BITS: gl.constexpr = False, VEC: gl.constexpr = 8):
        """An int32 a lane of a piece, > 0 where the keep-mask and the causal mask keep its column (LEAN_KEEP): the
        mask's keeps (_lane_keeps), a causal row's diagonal in 32 bits. Lanes the piece does not move are not
        stored: what they hold does not matter."""
        if CAUSAL:
            k = last_kept_column(row, causal_m, N) + 1 - cols
            if HAS_MASK:
                k = gl.where(_lane_keeps(mask_row, lanes, move, EVEN, MASK_BITS, VEC) != 0, k, 0)
        else:
            k = _lane_keeps(mask_row, lanes, move, EVEN, MASK_BITS, VEC)
        return k

    @gluon.jit
    def _zero_masked(dy, keep):
        """gl.where(keep != 0, dy, 0) (keep: a bool mask's bytes, 0 or 1) four values a select (MASK_EARLY)."""
        if dy.dtype == gl.float32:
            return gl.inline_asm_elementwise(ZERO_MASKED_F32, "=r,=r,=r,=r,r,r,r,r,r", [dy, keep], dtype=dy.dtype,
                                             is_pure=True, pack=4)
        else:
            return gl.inline_asm_elementwise(ZERO_MASKED_16, "=r,=r,r,r,r", [dy, keep], dtype=dy.dtype,
                                             is_pure=True, pack=4)

    @gluon.jit
    def _zero_masked_bits(dy, bits, place):
        """_zero_masked from the vectors' keep bits (MASK_BITS; 16-bit dy): bits, each lane's vector's byte of them,
        and place, the lane's place in its vector, as _keep_bits gives them."""
        return gl.inline_asm_elementwise(ZERO_BITS_16, "=r,=r" + ",r" * 10, [dy, bits, place], dtype=dy.dtype,
                                         is_pure=True, pack=4)

    @gluon.jit
    def _store_gradient(dx_row, lanes, move, y, dy, row_sum, scale, cols, row, N, mask_ptr, mask_stride, causal_m,
                        EVEN: gl.constexpr, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr, LOG: gl.constexpr,
                        mask_row=None, LEAN: gl.constexpr = False, DY_KEPT: gl.constexpr = False,
                        MASK_BITS: gl.constexpr = False, VEC: gl.constexpr = 8):
        """dx over a piece's lanes (LEAN: LEAN_KEEP's keep, mask_row the mask's row window, MASK_BITS: of a copy in
        bits; DY_KEPT: dy is 0 where the keep-mask drops a column, MASK_EARLY)."""
        if LOG and LEAN and DY_KEPT and not CAUSAL:
            dx = _lean_log_input_gradient(y, dy, row_sum, scale, None)
        elif LOG and LEAN and (HAS_MASK or CAUSAL):
            keep = _lean_keep(cols, lanes, move, row, N, mask_row, causal_m, EVEN, HAS_MASK and not DY_KEPT, CAUSAL,
                              MASK_BITS, VEC)
            dx = _lean_log_input_gradient(y, dy, row_sum, scale, keep)
        elif LOG:
            keep = True
            if HAS_MASK or CAUSAL:
                keep = kept(cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK, CAUSAL)
            dx = _log_input_gradient(y, dy, row_sum, scale, keep)
        else:
            dx = _input_gradient(y, dy, row_sum, scale)
        store_lanes(dx_row, lanes, move, dx.to(dx_row.dtype.element_ty), EVEN)

    @gluon.jit
    def _stage_rows(buffer, y_row, dy_row, lanes, move, EVEN: gl.constexpr, EVICT: gl.constexpr, LOG: gl.constexpr):
        """STAGED's _load_rows: softmax's dy (log_softmax's y) copied into `buffer`, the other row loaded, returned
        for both."""
        if LOG:
            stage(buffer, y_row, lanes, move, EVEN)
            dy = load_lanes(dy_row, lanes, move, 0.0, EVEN, EVICT)
            return dy, dy
        stage(buffer, dy_row, lanes, move, EVEN)
        y = load_lanes(y_row, lanes, move, 0.0, EVEN, EVICT)
        return y, y

    @gluon.jit
    def _read_staged(b0, b1, b2, P1: gl.constexpr, P2: gl.constexpr, layout: gl.constexpr):
        """The pieces' staged rows read from shared memory (a piece of no lanes: the first's again, unused)."""
        r0 = b0.load(layout)
        r1 = r0
        r2 = r0
        if P1 > 0:
            r1 = b1.load(layout)
        if P2 > 0:
            r2 = b2.load(layout)
        return r0, r1, r2

    @gluon.jit
    def _load_rows(y_row, dy_row, lanes, move, EVEN: gl.constexpr, EVICT: gl.constexpr, DY_ONLY: gl.constexpr):
        """A piece's y and dy as loaded; DY_ONLY: dy alone, returned for both (LATE_Y's log_softmax)."""
        if DY_ONLY:
            dy = load_lanes(dy_row, lanes, move, 0.0, EVEN, EVICT)
            return dy, dy
        y = load_lanes(y_row, lanes, move, 0.0, EVEN, EVICT)
        return y, load_lanes(dy_row, lanes, move, 0.0, EVEN, EVICT)

    @gluon.jit
    def cluster_backward_kernel(y_ptr, dy_ptr, dx_ptr, N, stride_y, stride_dy, stride_dx,
                                scale, mask_ptr, mask_stride, causal_m,
                                STEP: gl.constexpr, P0: gl.constexpr, P1: gl.constexpr, P2: gl.constexpr,
                                VEC: gl.constexpr, EVEN: gl.constexpr, ALIGNED: gl.constexpr, EVICT: gl.constexpr,
                                HAS_SCALE: gl.constexpr, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr,
                                LOG: gl.constexpr, LEAN_KEEP: gl.constexpr = False,
                                LATE_Y: gl.constexpr = False, MASK_EARLY: gl.constexpr = False,
                                STAGED: gl.constexpr = False, mask_group=1, mask_period=0,
                                MASK_SHARED: gl.constexpr = False, MASK_PHASED: gl.constexpr = False,
                                MASK_BITS: gl.constexpr = False):
        X: gl.constexpr = row_layout(gl.num_ctas(), gl.num_warps(), VEC)
        ENDS: gl.constexpr = ends_layout(gl.num_ctas(), gl.num_warps(), VEC)
        sum_in = receive_buffer()
        bar = exchange_barrier()
        if STAGED:  # softmax's dy, log_softmax's y (the same dtype)
            b0, b1, b2 = staging_buffers(dy_ptr.dtype.element_ty, P0, P1, P2)

        row = gl.program_id(0).to(gl.int64)  # one row a cluster; 64-bit: row · stride passes 2^31
        off, first_whole, end_whole = window_bounds(row, stride_y, N, VEC)
        y_row = row_window(y_ptr, row, stride_y, off, VEC)
        dy_row = row_window(dy_ptr, row, stride_dy, off, VEC)
        dx_row = row_window(dx_ptr, row, stride_dx, off, VEC)
        # a shared mask (MASK_SHARED: rows of y share its rows) read where it is, its row's pointer taken once; off
        # y's grid (MASK_PHASED) the copy of it that lies on this row's grid
        MASK_VECTORS: gl.constexpr = LEAN_KEEP and HAS_MASK  # the launch sees it lies on y's grid
        mask_row, mask_ptr, mask_stride = row_of(mask_ptr, mask_stride, row, mask_group, mask_period, off,
                                                 MASK_SHARED, MASK_PHASED, MASK_VECTORS, VEC)

        # Every load before the first reduction, as the forward's. LATE_Y: y is not held across the exchange but
        # read after it, log_softmax's only then (until then y stands for dy, which its terms alone read), softmax's
        # again (its terms read both; the second read is served from L2, where the first left it, evict_last).
        lanes0, move0 = piece(0, P0, STEP, first_whole, end_whole, X)
        # MASK_EARLY: the keep-mask's vectors with them, applied to dy once the row's terms have taken it.
        if STAGED:
            y0, dy0 = _stage_rows(b0, y_row, dy_row, lanes0, move0, EVEN, EVICT, LOG)
        else:
            y0, dy0 = _load_rows(y_row, dy_row, lanes0, move0, EVEN, EVICT, LATE_Y and LOG)
        if MASK_EARLY and MASK_BITS:
            b0, q0 = _keep_bits(mask_row, lanes0, move0, VEC, "")
        elif MASK_EARLY:
            m0 = load_lanes(mask_row, lanes0, move0, 0, EVEN, "")
        if P1 > 0:
            lanes1, move1 = piece(P0, P1, STEP, first_whole, end_whole, X)
            if STAGED:
                y1, dy1 = _stage_rows(b1, y_row, dy_row, lanes1, move1, EVEN, EVICT, LOG)
            else:
                y1, dy1 = _load_rows(y_row, dy_row, lanes1, move1, EVEN, EVICT, LATE_Y and LOG)
            if MASK_EARLY and MASK_BITS:
                b1, q1 = _keep_bits(mask_row, lanes1, move1, VEC, "")
            elif MASK_EARLY:
                m1 = load_lanes(mask_row, lanes1, move1, 0, EVEN, "")
        if P2 > 0:
            lanes2, move2 = piece(P0 + P1, P2, STEP, first_whole, end_whole, X)
            if STAGED:
                y2, dy2 = _stage_rows(b2, y_row, dy_row, lanes2, move2, EVEN, EVICT, LOG)
            else:
                y2, dy2 = _load_rows(y_row, dy_row, lanes2, move2, EVEN, EVICT, LATE_Y and LOG)
            if MASK_EARLY and MASK_BITS:
                b2, q2 = _keep_bits(mask_row, lanes2, move2, VEC, "")
            elif MASK_EARLY:
                m2 = load_lanes(mask_row, lanes2, move2, 0, EVEN, "")
        if not ALIGNED:
            end_lanes, end_cols, at_end = end_vectors(off, first_whole, end_whole, N, STEP, VEC, ENDS)
            end_y = gl.load(y_row + end_lanes, mask=at_end, other=0.0, eviction_policy=EVICT).to(gl.float32)
            end_dy = gl.load(dy_row + end_lanes, mask=at_end, other=0.0, eviction_policy=EVICT).to(gl.float32)

        # Each CTA's sum over its lanes: the pieces' terms added within each thread first, then one reduction
        # across the CTA's threads (one a piece cost fp32 151936 a barrier and a shared-memory round trip more).
        if STAGED:
            async_copy.commit_group()
        if STAGED and not LOG:
            async_copy.wait_group(0)
            dy0, dy1, dy2 = _read_staged(b0, b1, b2, P1, P2, X)
        t = thread_sums(_terms(y0, dy0, LOG), VEC)
        if P1 > 0:
            t += thread_sums(_terms(y1, dy1, LOG), VEC)
        if P2 > 0:
            t += thread_sums(_terms(y2, dy2, LOG), VEC)
        s = gl.sum(t, axis=1)
        if not ALIGNED:
            s += gl.convert_layout(gl.sum(_terms(end_y, end_dy, LOG), axis=1), s.type.layout)
        if MASK_EARLY and MASK_BITS:
            dy0 = _zero_masked_bits(dy0, b0, q0)
            if P1 > 0:
                dy1 = _zero_masked_bits(dy1, b1, q1)
            if P2 > 0:
                dy2 = _zero_masked_bits(dy2, b2, q2)
        elif MASK_EARLY:
            dy0 = _zero_masked(dy0, m0)
            if P1 > 0:
                dy1 = _zero_masked(dy1, m1)
            if P2 > 0:
                dy2 = _zero_masked(dy2, m2)

        cluster.wait()
        mbarrier.expect(bar, sum_in.nbytes_per_cta)
        push(s, sum_in, bar)
        mbarrier.wait(bar, 0, deps=[sum_in])
        row_sum = one_a_cta(gl.sum(received(sum_in), axis=0))  # every CTA adds the C sums in the same order

        if STAGED and LOG:
            async_copy.wait_group(0)
            y0, y1, y2 = _read_staged(b0, b1, b2, P1, P2, X)
        elif STAGED:  # read again, not held from the sum's read
            dy0, dy1, dy2 = _read_staged(b0, b1, b2, P1, P2, X)
        if LATE_Y:
            y0 = load_lanes(y_row, lanes0, move0, 0.0, EVEN, EVICT)
            if P1 > 0:
                y1 = load_lanes(y_row, lanes1, move1, 0.0, EVEN, EVICT)
            if P2 > 0:
                y2 = load_lanes(y_row, lanes2, move2, 0.0, EVEN, EVICT)
        if not HAS_SCALE:
            scale = 1.0
        s_x = gl.convert_layout(row_sum, gl.SliceLayout(1, X))[:, None]
        _store_gradient(dx_row, lanes0, move0, y0, dy0, s_x, scale, lanes0 - off, row, N, mask_ptr, mask_stride,
                        causal_m, EVEN, HAS_MASK, CAUSAL, LOG, mask_row, LEAN_KEEP, MASK_EARLY, MASK_BITS, VEC)
        if P1 > 0:
            _store_gradient(dx_row, lanes1, move1, y1, dy1, s_x, scale, lanes1 - off, row, N, mask_ptr, mask_stride,
                            causal_m, EVEN, HAS_MASK, CAUSAL, LOG, mask_row, LEAN_KEEP, MASK_EARLY, MASK_BITS, VEC)
        if P2 > 0:
            _store_gradient(dx_row, lanes2, move2, y2, dy2, s_x, scale, lanes2 - off, row, N, mask_ptr, mask_stride,
                            causal_m, EVEN, HAS_MASK, CAUSAL, LOG, mask_row, LEAN_KEEP, MASK_EARLY, MASK_BITS, VEC)
        if not ALIGNED:
            s_ends = gl.convert_layout(row_sum, gl.SliceLayout(1, ENDS))[:, None]
            if HAS_MASK and MASK_BITS:  # dy 0 where masked (the sum has taken it; y is -inf there): dx 0 there
                end_dy = gl.where(_end_bits_kept(mask_row, end_lanes, at_end, VEC), end_dy, 0.0)
            _store_gradient(dx_row, end_lanes, at_end, end_y, end_dy, s_ends, scale, end_cols, row, N, mask_ptr,
                            mask_stride, causal_m, False, HAS_MASK and not MASK_BITS, CAUSAL, LOG)


def config_for(N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> ClusterConfig:
    """The cluster for rows of N elements: the forward's choice for a thread holding two rows (16-bit ones packed,
    as loaded), its loads evict_last. A fused mask takes no share of the budget here, unlike the forward's: only
    log_softmax reads it, after the exchange, and with that share no configuration holds 262144 without spilling
    (docs/perf-notes.md). With LATE_Y, softmax's registers capped where LATE_Y_REGISTERS says."""
    late = late_y(N, dtype, fusion)
    shape = LATE_Y_SHAPES.get((dtype, N, keep_of(fusion))) if late and fusion.log else None
    if shape is not None:
        ctas, warps, cap = shape
        config = forward_cluster.layout(window_lanes(N, dtype), ctas, warps, dtype,
                                        forward_cluster.holding(dtype))
        return dataclasses.replace(config, max_registers=cap, evict=EVICT)
    config = _config(N, dtype)
    cap = LATE_Y_REGISTERS.get((dtype, N)) if late and not fusion.log else None
    return dataclasses.replace(config, max_registers=cap) if cap else config


@cache
def _config(N: int, dtype: torch.dtype) -> ClusterConfig:
    config = fitting_config(N, dtype, forward_cluster.holding(dtype), masked=False, rows=2)
    return dataclasses.replace(config, evict=EVICT)


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN,
           config: ClusterConfig | None = None) -> tuple[torch.Tensor, Launch]:
    reason = why_not_here()
    if reason is not None:
        raise ValueError(f"{reason}; use the two_pass backward")
    M, N = y.shape
    y, dy = same_alignment(y), same_alignment(dy)
    # its kernel reads the mask only for log_softmax: a shared one where it is on y's grid, laid out in phase copies
    # off it (rows of N off the grid), else written out first
    if not fusion.log:
        fusion = dataclasses.replace(fusion, mask_group=1, mask_period=0)
    elif phases_wanted(fusion, N, y.dtype)[0]:
        fusion = phased(fusion, vector_elems(y.dtype), bias=False, bits=mask_in_bits(fusion, N, y.dtype))
    elif expands(fusion, N, y.dtype):
        fusion = mask_expanded(fusion, M)
    dx = output_like(y)
    config = config or config_for(N, y.dtype, fusion)
    aligned = N % vector_elems(y.dtype) == 0  # then every row of y, dy and dx starts on a 16-byte boundary
    compiled = launch_kernel(cluster_backward_kernel, (M,), y, dy, dx, N, y.stride(0), dy.stride(0), dx.stride(0),
                             **fusion_args(fusion, y), **window_constexprs(config, N, y.dtype, aligned),
                             **launch_options(config), **switches(N, y.dtype, fusion))
    return dx, Launch(settings_of(config), [compiled])


def late_y(N: int, dtype: torch.dtype, fusion: Fusion) -> bool:
    """Whether the backward of rows of N elements reads y after the exchange (LATE_Y; None: log_softmax's where
    LATE_Y_CELLS has the cell)."""
    if LATE_Y is not None:
        return LATE_Y
    return fusion.log and (dtype, N, keep_of(fusion)) in LATE_Y_CELLS


def keep_of(fusion: Fusion) -> str | None:
    """What a log_softmax's backward keeps by: "causal" rows, a keep-"mask", or None."""
    return "causal" if fusion.causal_m is not None else "mask" if fusion.mask is not None else None


def switches(N: int, dtype: torch.dtype, fusion: Fusion) -> dict:
    """LATE_Y's, STAGED's, LEAN_KEEP's and MASK_EARLY's arguments where they apply: LATE_Y where late_y says,
    STAGED at STAGED_AT (a log's at STAGED_LOG_AT too) where LATE_Y does not apply; LEAN_KEEP to a log_softmax's
    with a keep-mask (its rows, shared or not, on y's grid: mask_on_grid; phase copies are) or causal rows,
    and MASK_EARLY with it to the keep-mask, where LATE_Y does not apply (MASK_EARLY None); MASK_PHASED to a shared
    mask laid out in phase copies (Fusion.mask_phased), MASK_BITS to one in copies of bits (Fusion.mask_bits)."""
    late = late_y(N, dtype, fusion)
    lean = LEAN_KEEP and fusion.log and (fusion.causal_m is not None or fusion.mask is not None) and (
        fusion.mask is None or mask_on_grid(fusion, N, dtype))
    early = lean and fusion.mask is not None and (not late if MASK_EARLY is None else MASK_EARLY)
    staged = not late and ((dtype, N) in STAGED_AT or (fusion.log and (dtype, N) in STAGED_LOG_AT))
    return {**({"LEAN_KEEP": True} if lean else {}), **({"MASK_EARLY": True} if early else {}),
            **({"LATE_Y": True} if late else {}), **({"STAGED": True} if staged else {}),
            **({"MASK_PHASED": True} if fusion.mask_phased else {}),
            **({"MASK_BITS": True} if fusion.mask_bits else {})}


def expands(fusion: Fusion, N: int, dtype: torch.dtype) -> bool:
    """Whether a log_softmax's shared mask is written out to y's rows before the kernel reads it: where its rows lie
    off y's 16-byte grid (read in place there, a byte at a time: 188 registers and 65 byte loads at bf16 50257,
    compiled for sm_90) and are not laid out in phase copies (rows of N off the grid: cluster.phases_wanted). On
    the grid the kernel reads it where it is, as the forward does (MASK_SHARED)."""
    return (fusion.log and fusion.mask_shared and not mask_on_grid(fusion, N, dtype)
            and not phases_wanted(fusion, N, dtype)[0])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN):
    """backward_traffic, a causal row read whole; log_softmax's shared mask read where it is, in phase copies off
    y's grid (cluster.phase_copy_passes), or first written out to y's rows (expands)."""
    whole_rows = partial(backward_traffic, skips_causal=False)
    if expands(fusion, N, dtype):
        return expanded_mask_traffic(M, N, dtype, fusion, whole_rows)
    floor = whole_rows(M, N, dtype, fusion)
    copies = phase_copy_passes(N, dtype, fusion, bias=False) if fusion.log else ()
    return dataclasses.replace(floor, passes=floor.passes + copies)


def unsupported(N: int, dtype: torch.dtype) -> str | None:
    return unsupported_width(N, dtype, BACKWARD_CAPACITY, wider="two_pass")


BACKWARD = Backward(
    name="cluster",
    summary="the rows of y and dy on chip across a thread-block cluster, partial sums pushed to every CTA: one read "
            "of each, one write of dx",
    launch=launch,
    traffic=traffic,
    triton=True,
    limits=unsupported,
    here=lambda: forward_cluster.why_not_here(),  # the forward module's, looked up at each call
)
