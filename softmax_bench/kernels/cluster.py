"""cluster: a wide row held on chip across the CTAs of a thread-block cluster; one read, one write.

Each row belongs to one cluster of C CTAs (C = 2 … 16). CTA c takes an even share of the row — the `step` lanes
from c·step, counted from the 16-byte boundary at or before the row's start — asks for all of it at once, 16
bytes a thread, and keeps it in registers (16-bit values packed two to a register). It reduces its share to a
local max and sum of exponentials, which replace x in its registers, then pushes (max, sum) into every peer's
shared memory with `st.async`, counted by an mbarrier; the cluster barrier before the push is split (arrive at
the start, wait just before the push), so it is already satisfied when reached. Each CTA combines the C pairs
into the row's max and sum and stores its share scaled. No barrier before exit: a CTA stores and leaves, and the
next cluster's loads overlap its stores. This is Quack's exchange (../shared/anchors/wide-rows.md) in Gluon;
docs/why-one-pass.md §4 and docs/perf-notes.md say how it got to a copy's speed.

Tensors are powers of two, a share need not be: it is held in up to three power-of-two pieces in fp32 (151936
lanes over 16 CTAs: 8192 + 1024 + 512 a CTA) and in one padded piece in 16-bit; padding lanes are never loaded.
Lanes outside the row are -inf: an empty share gives max -inf and sum 0, never NaN.

Needs Triton ≥ 3.8 (3.6 cannot build multi-CTA kernels) and an sm_90 GPU; elsewhere the variant says so and
`auto` does not pick it. Gluon kernels do not run in Triton's interpreter: the CPU tests check the launch
arithmetic and the compiled code (for sm_90, without a GPU).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache, lru_cache

import torch
import triton

from . import PLAIN, Fusion, Launch, Variant, interpreted, launch_kernel, one_pass_traffic, output_like
from .aligned import same_alignment, vector_elems, window_lanes
from .masking import fusion_args

try:  # Gluon and its Hopper cluster ops (Triton ≥ 3.5; multi-CTA builds need 3.8)
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia import hopper
    from triton.experimental.gluon.language.nvidia.hopper import cluster, mbarrier
except ImportError:  # pragma: no cover - depends on the installed Triton
    gluon = None

MIN_TRITON = (3, 8)
MAX_CTAS = 16  # the largest cluster Hopper runs (non-portable above 8: Triton sets the flag)
# Power-of-two pieces a CTA holds its lanes in, by how it holds them. fp32: up to three, little padding. Packed
# 16-bit values: one, padded — on the H200 a second piece cost 3 to 18 points of a copy (more registers, another
# reduction) where the padding costs only instructions on lanes that are never loaded (docs/perf-notes.md).
MAX_PIECES = {"fp32": 3, "packed": 1}
LOG2E = gl.constexpr(1.4426950408889634) if gluon is not None else None


@dataclass(frozen=True)
class ClusterConfig:
    """How rows are laid over a cluster: `ctas` CTAs of `num_warps` warps; CTA c takes the `step` lanes from
    c · step and holds them in power-of-two pieces of `span` lanes in all (a thread holds span / (32 · num_warps)
    elements, some of them padding). max_registers caps a thread's registers (ptxas's maxnreg; None: the
    compiler's choice): fewer registers, more CTAs an SM."""

    ctas: int
    num_warps: int
    step: int
    pieces: tuple[int, ...]
    max_registers: int | None = None

    @property
    def span(self) -> int:
        return sum(self.pieces)


# (largest N, CTAs, warps), by how a row is held: 16-bit values packed two to a register, or fp32 (fp32 input,
# or a scaled one). The configuration measured fastest on the H200 at each width of the wide and vocabulary
# shapes (scripts/cluster-configs.py; docs/perf-notes.md).
SHAPES: dict[str, tuple[tuple[int, int, int], ...]] = {
    "packed": ((32768, 4, 8), (98304, 8, 4), (131072, 16, 4), (163840, 8, 8), (262144, 16, 4), (2**62, 16, 8)),
    "fp32": ((65536, 8, 8), (262144, 16, 4), (2**62, 16, 8)),
}
WARPS = (4, 8, 16)
# Elements of a row a thread may hold, by how they are held and warps a CTA: 64 K registers an SM leave a thread
# of a 16-warp CTA 128 registers, one of a smaller CTA 255. Compiled for sm_90: 64 fp32 elements take 115–119
# registers, 128 take 179–189; 64 packed 16-bit elements take 82, 128 take 150. Past these they would spill.
# A fused keep-mask or causal mask takes a quarter of them (fp32, 128 elements: 255 registers and 80 bytes
# spilled; 96: 190 registers).
MAX_PER_THREAD = {"packed": {4: 128, 8: 128, 16: 96}, "fp32": {4: 128, 8: 128, 16: 64}}
MASKED_SHARE = 0.75
CAPACITY = MAX_CTAS * 32 * 16 * 64  # the widest window a cluster holds, however it holds it: 524288 lanes
MIN_N = 8193  # narrower rows fit one CTA's registers: fused takes them, with no exchange


def holding(dtype: torch.dtype, fusion: Fusion = PLAIN) -> str:
    """How a CTA holds its span: fp32 for fp32 input or a scaled one (the scale is applied as it loads), else the
    16-bit values as loaded."""
    return "fp32" if dtype == torch.float32 or fusion.scale != 1.0 else "packed"


def pieces_of(span: int, unit: int, max_pieces: int = 3) -> tuple[int, ...]:
    """`span` lanes rounded up to at most `max_pieces` power-of-two pieces, each a multiple of `unit` (one 16-byte
    vector a thread), largest first."""
    units = triton.cdiv(span, unit)
    while bin(units).count("1") > max_pieces:  # round the smallest bits up
        units += units & -units
    return tuple(unit << bit for bit in range(units.bit_length() - 1, -1, -1) if units >> bit & 1)


def layout(lanes: int, ctas: int, num_warps: int, dtype: torch.dtype, how: str) -> ClusterConfig:
    """`lanes` shared evenly by `ctas` CTAs of `num_warps` warps, in whole 16-byte vectors; each CTA's share held
    (`how`) in pieces of one vector a thread or more."""
    vec = vector_elems(dtype)
    step = triton.cdiv(triton.cdiv(lanes, ctas), vec) * vec
    return ClusterConfig(ctas, num_warps, step, pieces_of(step, 32 * num_warps * vec, MAX_PIECES[how]))


def config_for(N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> ClusterConfig:
    """The cluster for rows of N elements: SHAPES' CTAs and warps, else the nearest shape whose threads hold at
    most MAX_PER_THREAD elements (a share of them with a mask fused in) and whose last CTA gets columns of the row
    (else one where it does not; with no shape that fits, the one holding fewest elements a thread: it spills)."""
    masked = fusion.mask is not None or fusion.causal_m is not None
    return _config_for(N, dtype, holding(dtype, fusion), masked)


@cache  # ~0.1 ms of Python a call: more than some kernels take
def _config_for(N: int, dtype: torch.dtype, how: str, masked: bool) -> ClusterConfig:
    _, ctas, num_warps = next(shape for shape in SHAPES[how] if N <= shape[0])
    lanes = window_lanes(N, dtype)
    nearest = sorted(itertools.product((16, 8, 4, 2), WARPS),
                     key=lambda cw: abs(math.log2(cw[0] / ctas)) + abs(math.log2(cw[1] / num_warps)))
    configs = [layout(lanes, c, w, dtype, how) for c, w in nearest]
    share = MASKED_SHARE if masked else 1.0
    fits = [c for c in configs if c.span <= 32 * c.num_warps * MAX_PER_THREAD[how][c.num_warps] * share]
    if not fits:
        return min(configs, key=lambda c: c.span / c.num_warps)
    return next((c for c in fits if (c.ctas - 1) * c.step < N), fits[0])


@cache
def why_not_here() -> str | None:
    """Why the cluster kernel cannot run in this process (Triton version, device), or None when it can."""
    version = tuple(int(p) for p in triton.__version__.split(".")[:2])
    if gluon is None or version < MIN_TRITON:
        return f"cluster needs Triton ≥ {'.'.join(map(str, MIN_TRITON))} (this is {triton.__version__})"
    if interpreted():
        return "cluster is a Gluon kernel, which Triton's interpreter does not run"
    if not torch.cuda.is_available():
        return "cluster needs a CUDA GPU"
    major, _ = torch.cuda.get_device_capability()
    if major < 9:
        return f"cluster needs thread-block clusters (compute capability ≥ 9.0; this GPU is {major}.x)"
    return None


if gluon is not None:

    @gluon.constexpr_function
    def split_over_ctas(num_ctas, rank, dim):
        """cga_layout bases: dimension `dim` of a rank-`rank` tensor split over the cluster's CTAs."""
        num_ctas = getattr(num_ctas, "value", num_ctas)
        return [[(1 << i) if d == dim else 0 for d in range(rank)] for i in range(num_ctas.bit_length() - 1)]

    @gluon.jit
    def _piece(start: gl.constexpr, PIECE: gl.constexpr, STEP: gl.constexpr, first_whole, end_whole,
               layout: gl.constexpr):
        """A piece's lanes — CTA c holds [c·STEP + start, c·STEP + start + PIECE) of the row's window — and which of
        them it moves: the whole 16-byte vectors of the row among its own STEP lanes. first_whole, end_whole and
        STEP are multiples of VEC, so the mask is constant over each vector (and known when compiling for j)."""
        c = gl.arange(0, gl.num_ctas(), gl.SliceLayout(1, layout))
        j = gl.arange(0, PIECE, gl.SliceLayout(0, layout))
        lanes = c[:, None] * STEP + start + j[None, :]
        return lanes, (lanes >= first_whole) & (lanes < end_whole) & (start + j < STEP)[None, :]

    @gluon.jit
    def _keep(x, cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr):
        """x, -inf where the keep-mask or the causal mask drop a column."""
        if HAS_MASK:
            kept = gl.load(mask_ptr + row * mask_stride + cols, mask=(cols >= 0) & (cols < N), other=0)
            x = gl.where(kept != 0, x, -float("inf"))
        if CAUSAL:
            # bottom-right aligned: query i = row mod M keeps keys j ≤ i + (N − M)
            x = gl.where(cols <= (row % causal_m) + (N - causal_m), x, -float("inf"))
        return x

    @gluon.jit
    def _load(x_row, lanes, move, row, off, N, scale, mask_ptr, mask_stride, causal_m,
              EVEN: gl.constexpr, HOLD_F32: gl.constexpr, HAS_SCALE: gl.constexpr, HAS_MASK: gl.constexpr,
              CAUSAL: gl.constexpr):
        """A piece's vectors to move, -inf elsewhere and where the masks drop a column: in fp32 times the scale
        (HOLD_F32), else as loaded, two 16-bit values to a register. No per-element work on a plain row."""
        if EVEN:
            x = gl.load(x_row + lanes)
        else:
            x = gl.load(x_row + lanes, mask=move, other=-float("inf"))
        if HOLD_F32:
            x = x.to(gl.float32)
        if HAS_SCALE:
            x = x * scale
            if not EVEN:
                x = gl.where(move, x, -float("inf"))  # -inf times a negative scale is +inf
        return _keep(x, lanes - off, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK, CAUSAL)

    @gluon.jit
    def _max16(a, b):
        """max of two bf16 or fp16 values in their own dtype: exact, and no fp32 copy of the row to keep alive
        until the sum (tl.max widens 16-bit values first). NaN loses here, and then fills the sum."""
        if a.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise("max.bf16 $0, $1, $2;", "=h,h,h", [a, b], dtype=a.dtype, is_pure=True,
                                             pack=1)
        else:
            return gl.inline_asm_elementwise("max.f16 $0, $1, $2;", "=h,h,h", [a, b], dtype=a.dtype, is_pure=True,
                                             pack=1)

    @gluon.jit
    def _max(x):
        """The max of each CTA's lanes, in fp32."""
        if x.dtype == gl.float32:
            return gl.max(x, axis=1)
        else:
            return gl.reduce(x, 1, _max16).to(gl.float32)

    @gluon.jit
    def _exp(x, shift):
        """e^(x − shift) in fp32, as 2^((x − shift)·log2 e): x − shift first, exact for 16-bit x, so that e^0 is 1
        whatever the magnitude of x (x·log2 e − shift·log2 e would be off by |x|·2^-24)."""
        return gl.exp2((x.to(gl.float32) - shift[:, None]) * LOG2E)

    @gluon.jit
    def _hold(e, dtype: gl.constexpr):
        """The exponentials e (fp32) as the row is held: fp32, or rounded to x's 16-bit dtype two to a register (a
        plain conversion would leave each 16-bit value in a register of its own)."""
        if dtype == gl.float32:
            return e
        elif dtype == gl.bfloat16:
            return gl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,r,r", [e], dtype=gl.bfloat16,
                                             is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise("cvt.rn.f16x2.f32 $0, $2, $1;", "=r,r,r", [e], dtype=gl.float16,
                                             is_pure=True, pack=2)

    @gluon.jit
    def _scaled(x, f):
        """x · f in x's dtype, x as held. In one piece of inline PTX for 16-bit x, so that the compiler cannot keep
        an fp32 copy of the row alive across the exchange (it would share a plain widening with the sum's): bf16 is
        widened by bit moves the compiler does not recognise as the sum's and multiplied in fp32 (y within two
        roundings of the exact value); fp16 is multiplied as it is held, two to a register, by f rounded to fp16
        (within three roundings: 2^-11 each)."""
        if x.dtype == gl.float32:
            return x * f
        elif x.dtype == gl.bfloat16:
            return gl.inline_asm_elementwise(
                "{ .reg .b32 lo, hi; prmt.b32 lo, $1, 0, 0x1044; and.b32 hi, $1, -65536; mul.f32 lo, lo, $2; "
                "mul.f32 hi, hi, $3; cvt.rn.bf16x2.f32 $0, hi, lo; }",
                "=r,r,r,r", [x, f], dtype=gl.bfloat16, is_pure=True, pack=2)
        else:
            return gl.inline_asm_elementwise("{ .reg .b32 f; cvt.rn.f16x2.f32 f, $3, $2; mul.rn.f16x2 $0, $1, f; }",
                                             "=r,r,r,r", [x, f], dtype=gl.float16, is_pure=True, pack=2)

    @gluon.jit
    def _store(y_row, lanes, move, y, EVEN: gl.constexpr):
        if EVEN:
            gl.store(y_row + lanes, y)
        else:
            gl.store(y_row + lanes, y, mask=move)

    @gluon.jit
    def cluster_kernel(x_ptr, y_ptr, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m,
                       STEP: gl.constexpr, P0: gl.constexpr, P1: gl.constexpr, P2: gl.constexpr,
                       VEC: gl.constexpr,
                       EVEN: gl.constexpr, ALIGNED: gl.constexpr, HOLD_F32: gl.constexpr,
                       HAS_SCALE: gl.constexpr, HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr):
        C: gl.constexpr = gl.num_ctas()
        W: gl.constexpr = gl.num_warps()
        T: gl.constexpr = 32 * W  # threads a CTA: each pushes one (max, sum) slot
        # x's pieces: [C, P], CTA c holding row c, 16 bytes a thread
        X: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, W], [1, 0], cga_layout=split_over_ctas(C, 2, 0))
        # the row's partial end vectors: [C, 2·VEC], each element held by one thread of each CTA
        ENDS: gl.constexpr = gl.BlockedLayout([1, 1], [32 // (2 * VEC), 2 * VEC], [W, 1], [1, 0],
                                              cga_layout=split_over_ctas(C, 2, 0))
        # the pushed pairs: [C (source), T], one element a thread of the source CTA (one owner each, so no CTA
        # over-credits the mbarrier), landing in the CTA that owns that column slice of the receive buffer
        ONE_EACH: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, W], [1, 0],
                                                  cga_layout=split_over_ctas(C, 2, 0))
        RECV: gl.constexpr = gl.BlockedLayout([1, 1], [1, 32], [1, W], [1, 0], cga_layout=split_over_ctas(C, 2, 1))
        RECV_SMEM: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 1))

        # The receive buffers and the mbarrier first: allocated after the reductions, their bytes could be the
        # reductions' scratch, and a fast peer's push would land in it (../shared/anchors/probes/README.md).
        max_in = gl.allocate_shared_memory(gl.float32, [C, T], RECV_SMEM)
        sum_in = gl.allocate_shared_memory(gl.float32, [C, T], RECV_SMEM)
        bar = mbarrier.allocate_mbarrier()
        mbarrier.init(bar, count=1)
        mbarrier.fence_init_release_cluster()
        cluster.arrive(relaxed=True)  # every peer's barrier is initialised before anyone pushes: wait() below

        row = gl.program_id(0).to(gl.int64)  # one row a cluster; 64-bit: row · stride passes 2^31
        # Lanes count from the 16-byte boundary at or before the row's start, `off` elements before it; y's rows
        # start as far past a boundary as x's (the launch sees to it).
        off = ((row * stride_x) % VEC).to(gl.int32)
        x_row = x_ptr + gl.multiple_of(row * stride_x - off, VEC)
        y_row = y_ptr + gl.multiple_of(row * stride_y - off, VEC)
        first_whole = gl.cdiv(off, VEC) * VEC  # lanes [first_whole, end_whole) are whole vectors inside the row
        end_whole = (off + N) // VEC * VEC

        # Every load is issued before the first reduction: a reduction's barrier would hold back the loads after it.
        lanes0, move0 = _piece(0, P0, STEP, first_whole, end_whole, X)
        x0 = _load(x_row, lanes0, move0, row, off, N, scale, mask_ptr, mask_stride, causal_m,
                   EVEN, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL)
        if P1 > 0:
            lanes1, move1 = _piece(P0, P1, STEP, first_whole, end_whole, X)
            x1 = _load(x_row, lanes1, move1, row, off, N, scale, mask_ptr, mask_stride, causal_m,
                       EVEN, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL)
        if P2 > 0:
            lanes2, move2 = _piece(P0 + P1, P2, STEP, first_whole, end_whole, X)
            x2 = _load(x_row, lanes2, move2, row, off, N, scale, mask_ptr, mask_stride, causal_m,
                       EVEN, HOLD_F32, HAS_SCALE, HAS_MASK, CAUSAL)
        if not ALIGNED:
            # The row's partial end vectors, element by element, each in the CTA whose span holds it: the head
            # (when the row starts past a boundary) and the tail (when it ends before one and is not the head).
            c = gl.arange(0, C, gl.SliceLayout(1, ENDS))[:, None]
            ends = gl.arange(0, 2 * VEC, gl.SliceLayout(0, ENDS))[None, :]
            end_lanes = gl.where(ends < VEC, ends, end_whole + ends - VEC) + c * 0
            end_cols = end_lanes - off
            is_partial = gl.where(ends < VEC, off > 0, end_whole >= first_whole)
            at_end = is_partial & (end_lanes >= c * STEP) & (end_lanes < c * STEP + STEP) & (end_cols >= 0) \
                & (end_cols < N)
            end_x = gl.load(x_row + end_lanes, mask=at_end, other=-float("inf")).to(gl.float32)
            if HAS_SCALE:
                end_x = gl.where(at_end, end_x * scale, -float("inf"))
            end_x = _keep(end_x, end_cols, row, N, mask_ptr, mask_stride, causal_m, HAS_MASK, CAUSAL)

        m = _max(x0)
        if P1 > 0:
            m = gl.maximum(m, _max(x1))
        if P2 > 0:
            m = gl.maximum(m, _max(x2))
        if not ALIGNED:
            m = gl.maximum(m, gl.convert_layout(gl.max(end_x, axis=1), gl.SliceLayout(1, X)))
        # The exponentials replace x in its registers, in x's dtype: one exp an element, and 16-bit values stay
        # packed two to a register (rounded once more there: y is within two roundings of the exact value).
        # An empty or all -inf span shifts by 0: sum 0, not NaN.
        shift = gl.where(m == -float("inf"), 0.0, m)
        x0 = _hold(_exp(x0, shift), x0.dtype)
        s = gl.sum(x0.to(gl.float32), axis=1)  # of the values held: the compiler cannot sink their rounding
        if P1 > 0:
            x1 = _hold(_exp(x1, shift), x1.dtype)
            s += gl.sum(x1.to(gl.float32), axis=1)
        if P2 > 0:
            x2 = _hold(_exp(x2, shift), x2.dtype)
            s += gl.sum(x2.to(gl.float32), axis=1)
        if not ALIGNED:
            end_x = _exp(end_x, gl.convert_layout(shift, gl.SliceLayout(1, ENDS)))
            s += gl.convert_layout(gl.sum(end_x, axis=1), gl.SliceLayout(1, X))

        # Push (max, sum) into every CTA of the cluster: thread j of CTA src writes slot (src, j), which lives in
        # CTA j // (T / C). Each CTA then holds all C pairs, T / C times over.
        zeros = gl.zeros([C, T], gl.float32, ONE_EACH)
        m_out = gl.convert_layout(m, gl.SliceLayout(1, ONE_EACH))[:, None] + zeros
        s_out = gl.convert_layout(s, gl.SliceLayout(1, ONE_EACH))[:, None] + zeros
        cluster.wait()
        mbarrier.expect(bar, max_in.nbytes_per_cta + sum_in.nbytes_per_cta)
        hopper.async_store(max_in, m_out, bar)
        hopper.async_store(sum_in, s_out, bar)
        mbarrier.wait(bar, 0, deps=[max_in, sum_in])
        maxes = max_in.load(RECV)
        sums = sum_in.load(RECV)
        row_max = gl.max(maxes, axis=0)  # [T], split over the CTAs: every entry holds the row's max
        row_shift = gl.where(row_max == -float("inf"), 0.0, row_max)  # an all -inf row: zeros, not NaN
        row_sum = gl.sum(sums * gl.exp2((maxes - row_shift[None, :]) * LOG2E), axis=0)
        # back to one value a CTA ([C], CTA c holding entry c), every entry of a CTA's slice being the same
        row_shift = gl.max(gl.convert_layout(gl.reshape(row_shift, [C, T // C]), ONE_EACH), axis=1)
        row_sum = gl.max(gl.convert_layout(gl.reshape(row_sum, [C, T // C]), ONE_EACH), axis=1)
        inv_sum = 1.0 / gl.where(row_sum == 0.0, 1.0, row_sum)

        # m, not shift: a CTA with nothing but -inf holds zeros, and 2^(0 − row_shift) may overflow
        factor = gl.exp2((gl.convert_layout(m, row_shift.type.layout) - row_shift) * LOG2E) * inv_sum
        out_ty = y_ptr.dtype.element_ty
        f = gl.convert_layout(factor, gl.SliceLayout(1, X))[:, None]
        _store(y_row, lanes0, move0, _scaled(x0, f).to(out_ty), EVEN)
        if P1 > 0:
            _store(y_row, lanes1, move1, _scaled(x1, f).to(out_ty), EVEN)
        if P2 > 0:
            _store(y_row, lanes2, move2, _scaled(x2, f).to(out_ty), EVEN)
        if not ALIGNED:
            end_y = end_x * gl.convert_layout(factor, gl.SliceLayout(1, ENDS))[:, None]
            gl.store(y_row + end_lanes, end_y.to(out_ty), mask=at_end)


def kernel_constexprs(config: ClusterConfig, N: int, dtype: torch.dtype, aligned: bool,
                      fusion: Fusion = PLAIN) -> dict:
    """The kernel's compile-time arguments for rows of N elements whose windows all start on a 16-byte boundary
    (aligned) or may start anywhere; shared between calls: read them, do not change them."""
    return _kernel_constexprs(config, N, dtype, aligned, holding(dtype, fusion))


@lru_cache(maxsize=1024)
def _kernel_constexprs(config: ClusterConfig, N: int, dtype: torch.dtype, aligned: bool, how: str) -> dict:
    p0, p1, p2 = config.pieces + (0,) * (3 - len(config.pieces))
    even = aligned and config.ctas * config.step == N and config.span == config.step
    return dict(STEP=config.step, P0=p0, P1=p1, P2=p2, VEC=vector_elems(dtype), EVEN=even, ALIGNED=aligned,
                HOLD_F32=how == "fp32")


@lru_cache(maxsize=1024)
def settings_of(config: ClusterConfig) -> dict:
    """What a launch reports it chose."""
    settings = {"ctas": config.ctas, "num_warps": config.num_warps, "step": config.step,
                "pieces": "+".join(map(str, config.pieces))}
    return settings if config.max_registers is None else {**settings, "max_registers": config.max_registers}


def launch(x: torch.Tensor, fusion: Fusion = PLAIN, config: ClusterConfig | None = None) -> tuple[torch.Tensor, Launch]:
    reason = why_not_here()
    if reason is not None:
        raise ValueError(f"{reason}; use variant='auto'")
    if fusion.log:
        raise ValueError("cluster computes softmax only; use variant='auto' (or 'two_pass') for log_softmax")
    M, N = x.shape
    x = same_alignment(x)
    y = output_like(x)
    config = config or config_for(N, x.dtype, fusion)
    aligned = N % vector_elems(x.dtype) == 0  # then every row of x (after same_alignment) and of y starts on one
    constexprs = kernel_constexprs(config, N, x.dtype, aligned, fusion)
    args = fusion_args(fusion, x)
    del args["LOG"]  # refused above
    compiled = launch_kernel(cluster_kernel, (M,), x, y, N, x.stride(0), y.stride(0), **args, **constexprs,
                             num_ctas=config.ctas, num_warps=config.num_warps,
                             **({} if config.max_registers is None else {"maxnreg": config.max_registers}))
    return y, Launch(settings_of(config), [compiled])


def unsupported(N: int, dtype: torch.dtype) -> str | None:
    reason = why_not_here()
    if reason is None and N < MIN_N:
        reason = f"cluster takes rows of {MIN_N} elements or more (got N = {N}); fused holds narrower ones"
    if reason is None and window_lanes(N, dtype) > CAPACITY:
        reason = (f"cluster holds rows of up to {CAPACITY} elements on chip ({CAPACITY - vector_elems(dtype) + 1} "
                  f"when N is not a multiple of {vector_elems(dtype)}; got N = {N}); use split or two_pass")
    return reason


VARIANT = Variant(
    name="cluster",
    summary="each row on chip across a thread-block cluster, partial max/sum pushed to every CTA: one read, one write",
    launch=launch,
    traffic=one_pass_traffic,
    triton=True,
    limits=unsupported,
    log_softmax=False,  # not yet: its kernel runs on an H200 only, and log_softmax there is to be measured
)
