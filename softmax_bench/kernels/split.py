"""split: a wide row split over K programs that run at the same time; each reads its segment twice, the second
time from L2.

Each program reduces its segment of a row to a partial (max, sum) — reading it from device memory — and
publishes the partial in a small global buffer; when the K partials of the row are there it combines them into
the row's max and sum, reads its segment again and stores the normalized values. The grid is persistent and
sized so that the segments in flight fit in L2 (60 MB on the H200): the second read is served from there, so
device memory sees one read and one write, however wide the row. A program that waits for a partner that is
not yet resident would wait forever: every group of K programs is resident at once.

Rows of any length and alignment move in 16-byte vectors, as in softmax_bench.kernels.aligned. The kernel keeps
its own copy of aligned.py's block loops: written through those helpers it ran 20 % slower in fp32 on the H200
(docs/perf-notes.md).

Triton's interpreter runs programs one after another, so there the kernel runs as two launches: every program
publishes, then every program combines and stores (the waits then find every partial already there).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import torch
import triton
import triton.language as tl

from . import (PLAIN, Fusion, Launch, Traffic, Variant, cdiv, elem_size, interpreted, launch_kernel, mask_pass,
               next_power_of_2, one_pass_traffic, output_like)
from .aligned import row_values, same_alignment, vector_elems, window_lanes
from .masking import fusion_args, mask_rows, normalized, normalizer, scale_and_mask


@dataclass(frozen=True)
class SplitConfig:
    block: int  # elements a program loads at once (a power of two)
    num_warps: int
    per_sm: int  # programs per SM in the persistent grid, at most what the compiled kernel's occupancy allows
    segment_bytes: int  # the most of a row one program takes: a row of more bytes is split over K programs
    l2_budget: int  # bytes of segments in flight at once: they must stay in L2 until their second read


# Measured on the H200 (docs/perf-notes.md, scripts/split-configs.py): 16 KB blocks at 8 warps, 64 KB segments,
# 4 programs per SM, 32 MB of segments in flight.
CONFIGS = {
    torch.float32: SplitConfig(block=4096, num_warps=8, per_sm=4, segment_bytes=65536, l2_budget=32 << 20),
    torch.bfloat16: SplitConfig(block=8192, num_warps=8, per_sm=4, segment_bytes=65536, l2_budget=32 << 20),
    torch.float16: SplitConfig(block=8192, num_warps=8, per_sm=4, segment_bytes=65536, l2_budget=32 << 20),
}
MAX_SPLIT = 256  # programs a row may be split over (the partials one program combines)
# PHASE: the whole kernel (on a GPU), or one of its halves, one launch each (interpreted)
BOTH, PUBLISH, COMBINE = tl.constexpr(0), tl.constexpr(1), tl.constexpr(2)


@triton.jit(do_not_specialize=["epoch"])  # a new epoch every launch: one compiled kernel for all
def split_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, K, SEG, word_ptr, epoch,
                 scale, mask_ptr, mask_stride, causal_m,
                 BLOCK: tl.constexpr, VEC: tl.constexpr, K_POW2: tl.constexpr, PHASE: tl.constexpr,
                 HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                 mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False,
                 bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0,
                 bias_group=1, bias_period=0, BIAS_SHARED: tl.constexpr = False):
    k = tl.program_id(0) % K  # which segment of its rows this program takes
    group = tl.program_id(0) // K
    n_groups = tl.num_programs(0) // K
    block = tl.arange(0, BLOCK)
    peers = tl.arange(0, K_POW2)
    ends = tl.arange(0, 2 * VEC)
    tag = tl.cast(epoch, tl.int64) << 32
    for row in range(group, M, n_groups):
        r = tl.cast(row, tl.int64)  # row · stride passes 2^31 on large tensors
        row_mask, row_mask_stride = mask_rows(mask_ptr, mask_stride, r, mask_group, mask_period, MASK_SHARED)
        if HAS_BIAS:  # only then: Triton 3.6 cannot return bias_ptr's None from a function
            row_bias, row_bias_stride = mask_rows(bias_ptr, bias_stride, r, bias_group, bias_period, BIAS_SHARED)
        else:
            row_bias, row_bias_stride = bias_ptr, bias_stride
        # Lanes count from the 16-byte boundary at or before the row's start, `off` elements before it. y's rows
        # start as far past a boundary as x's (the launch sees to it).
        off = ((r * stride_x) % VEC).to(tl.int32)
        x_row = x_ptr + tl.multiple_of(r * stride_x - off, VEC)
        y_row = y_ptr + tl.multiple_of(r * stride_y - off, VEC)
        # A vector that holds any element of the row is read whole: it never crosses a page, so it is mapped.
        row_lanes = tl.cdiv(off + N, VEC) * VEC
        seg_start = k * SEG  # SEG is a whole number of blocks: a block never straddles two segments
        seg_end = tl.minimum(seg_start + SEG, row_lanes)
        first_whole = tl.cdiv(off, VEC) * VEC  # lanes [first_whole, end_whole) are whole vectors inside the row
        end_whole = (off + N) // VEC * VEC

        # Pass 1, from device memory: the segment's max and sum of exp(x - max); x stays in L2 for pass 2. (Not
        # in the interpreter's second launch, which reads the partials the first published.)
        m = tl.full((), -float("inf"), tl.float32)
        s = tl.full((), 0.0, tl.float32)  # fp32 whatever the input dtype
        for start in range(seg_start, seg_end if PHASE != COMBINE else seg_start, BLOCK):
            lanes = start + block
            if (start >= first_whole) & (start + BLOCK <= end_whole):
                # A block of whole vectors inside the row (all but the first and last of a row): no masks. In
                # bf16 the per-element masks cost more instructions than the loads allow (docs/perf-notes.md).
                x = tl.load(x_row + lanes, eviction_policy="evict_last").to(tl.float32)
                x = scale_and_mask(x, r, lanes - off, lanes >= 0, scale, row_mask, row_mask_stride, causal_m, N,
                                   HAS_SCALE, HAS_MASK, CAUSAL, row_bias, row_bias_stride, HAS_BIAS, BIAS_MIN)
            else:
                x = tl.load(x_row + lanes, mask=lanes < row_lanes, other=-float("inf"), eviction_policy="evict_last")
                x = row_values(x, r, lanes - off, N, scale, row_mask, row_mask_stride, causal_m,
                               HAS_SCALE, HAS_MASK, CAUSAL, row_bias, row_bias_stride, HAS_BIAS, BIAS_MIN)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            # While every value so far is -inf, shift by 0: exp(-inf - -inf) would be NaN.
            shift = tl.where(m_new == -float("inf"), 0.0, m_new)
            s = s * tl.exp(m - shift) + tl.sum(tl.exp(x - shift), axis=0)
            m = m_new

        if PHASE != COMBINE:
            # Each partial travels with this launch's epoch in one 64-bit word: a relaxed atomic publishes it
            # without a fence, so no program waits for its own stores to drain.
            words = word_ptr + 2 * (r * K + k)
            tl.atomic_xchg(words, tag | as_bits(m), sem="relaxed", scope="gpu")
            tl.atomic_xchg(words + 1, tag | as_bits(s), sem="relaxed", scope="gpu")
        if PHASE != PUBLISH:
            peer_words = word_ptr + 2 * (r * K + peers)
            peer = peers < K
            seen_max = tl.zeros([K_POW2], tl.int64)
            seen_sum = tl.zeros([K_POW2], tl.int64)
            pending = tl.cast(K, tl.int32)
            while pending > 0:
                seen_max = tl.atomic_add(peer_words, 0, mask=peer, sem="relaxed", scope="gpu")
                seen_sum = tl.atomic_add(peer_words + 1, 0, mask=peer, sem="relaxed", scope="gpu")
                stale = ((seen_max >> 32) != epoch) | ((seen_sum >> 32) != epoch)
                pending = tl.sum((stale & peer).to(tl.int32), axis=0)
            peer_max = tl.where(peer, from_bits(seen_max), -float("inf"))
            peer_sum = tl.where(peer, from_bits(seen_sum), 0.0)
            row_max = tl.max(peer_max, axis=0)
            shift = tl.where(row_max == -float("inf"), 0.0, row_max)  # an all -inf row: zeros, not NaN
            row_sum = tl.sum(peer_sum * tl.exp(peer_max - shift), axis=0)
            norm = normalizer(row_sum, LOG)

            # Pass 2, from L2: normalize, and store the 16-byte vectors wholly inside the row ...
            for start in range(seg_start, seg_end, BLOCK):
                lanes = start + block
                if (start >= first_whole) & (start + BLOCK <= end_whole):
                    x = tl.load(x_row + lanes, eviction_policy="evict_first").to(tl.float32)
                    x = scale_and_mask(x, r, lanes - off, lanes >= 0, scale, row_mask, row_mask_stride, causal_m, N,
                                       HAS_SCALE, HAS_MASK, CAUSAL, row_bias, row_bias_stride, HAS_BIAS, BIAS_MIN)
                    y = normalized(x, shift, norm, LOG)
                    tl.store(y_row + lanes, y.to(y_ptr.dtype.element_ty), eviction_policy="evict_first")
                else:
                    x = tl.load(x_row + lanes, mask=lanes < row_lanes, other=-float("inf"),
                                eviction_policy="evict_first")
                    x = row_values(x, r, lanes - off, N, scale, row_mask, row_mask_stride, causal_m,
                                   HAS_SCALE, HAS_MASK, CAUSAL, row_bias, row_bias_stride, HAS_BIAS, BIAS_MIN)
                    y = normalized(x, shift, norm, LOG)
                    whole = (lanes >= first_whole) & (lanes < end_whole)
                    tl.store(y_row + lanes, y.to(y_ptr.dtype.element_ty), mask=whole, eviction_policy="evict_first")
            # ... then element by element the head vector (when the row starts past a boundary) and the tail
            # vector (when it ends before one and is not the head), where they fall in this segment.
            end_lanes = tl.where(ends < VEC, ends, end_whole + ends - VEC)
            end_cols = end_lanes - off
            is_partial = tl.where(ends < VEC, off > 0, end_whole >= first_whole)
            at_end = is_partial & (end_cols >= 0) & (end_cols < N) & (end_lanes >= seg_start) & (end_lanes < seg_end)
            end_x = tl.load(x_row + end_lanes, mask=at_end, other=-float("inf"))
            end_x = row_values(end_x, r, end_cols, N, scale, row_mask, row_mask_stride, causal_m,
                               HAS_SCALE, HAS_MASK, CAUSAL, row_bias, row_bias_stride, HAS_BIAS, BIAS_MIN)
            tl.store(y_row + end_lanes, normalized(end_x, shift, norm, LOG).to(y_ptr.dtype.element_ty), mask=at_end)


@triton.jit
def as_bits(value):
    """An fp32 scalar's 32 bits in the low half of an int64."""
    return value.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF


@triton.jit
def from_bits(word):
    """The fp32 in the low 32 bits of int64 words."""
    return word.to(tl.int32).to(tl.float32, bitcast=True)


@dataclass
class Exchange:
    """The words programs exchange partials through, reused from launch to launch on one device and stream.

    Two int64 words per segment of a row, its max and its sum: an fp32 in the low half, the launch's epoch in
    the high half. A word is this launch's when it carries this launch's epoch: earlier launches left smaller
    epochs, so nothing needs clearing between launches.
    """

    words: torch.Tensor
    epoch: int = 0

    def next_epoch(self) -> int:
        self.epoch += 1
        if self.epoch == 2**31:  # the epoch is a kernel int32: start over from cleared words
            self.words.zero_()
            self.epoch = 1
        return self.epoch


EXCHANGES: dict[tuple, Exchange] = {}
OCCUPANCY: dict[tuple, int] = {}


def exchange_for(x: torch.Tensor, segments: int) -> Exchange:
    """The exchange of x's device and current stream, with room for `segments` partials."""
    stream = torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0
    key = (x.device, stream)
    found = EXCHANGES.get(key)
    if found is None or found.words.numel() < 2 * segments:
        size = max(2 * segments, 2 * found.words.numel() if found else 0)
        found = EXCHANGES[key] = Exchange(torch.zeros(size, dtype=torch.int64, device=x.device),
                                          found.epoch if found else 0)
    return found


@dataclass(frozen=True)
class Split:
    """How rows of N elements are split: K segments of SEG lanes (a multiple of the block); K_POW2 ≥ K, a power of
    two (the kernel's vector of partials)."""

    K: int
    SEG: int
    K_POW2: int


@lru_cache(maxsize=1024)
def split_of(N: int, dtype: torch.dtype, config: SplitConfig) -> Split:
    """K segments of equal length (in whole blocks) covering a row's window (aligned.window_lanes)."""
    lanes = window_lanes(N, dtype)
    K = cdiv(lanes * elem_size(dtype), config.segment_bytes)
    return Split(K, cdiv(cdiv(lanes, K), config.block) * config.block, next_power_of_2(K))


@cache
def sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def occupancy(compiled, num_warps: int, props) -> int:
    """Programs of a compiled kernel one SM (of torch.cuda.get_device_properties) holds at once: by registers,
    threads and shared memory."""
    regs_per_warp = cdiv(compiled.n_regs * 32, 256) * 256  # allocated per warp, in units of 256
    by_regs = 4 * ((props.regs_per_multiprocessor // 4) // regs_per_warp) // num_warps  # 4 sub-partitions
    by_threads = props.max_threads_per_multi_processor // (32 * num_warps)
    shared = compiled.metadata.shared
    by_shared = props.shared_memory_per_multiprocessor // (shared + 1024) if shared else by_threads
    return min(by_regs, by_threads, by_shared, 32)


def launch(x: torch.Tensor, fusion: Fusion = PLAIN, config: SplitConfig | None = None) -> tuple[torch.Tensor, Launch]:
    if x.is_cuda and torch.cuda.is_current_stream_capturing():
        raise ValueError(
            "split cannot be captured in a CUDA graph: each launch tags its partials with a new epoch, and a replay "
            "would reuse the captured one; use variant='two_pass' (auto does so while capturing)"
        )
    config = config or CONFIGS[x.dtype]
    M, N = x.shape
    x = same_alignment(x)
    y = output_like(x, fusion)
    split = split_of(N, x.dtype, config)
    if split.K > MAX_SPLIT:
        raise ValueError(f"split takes rows of up to {MAX_SPLIT} segments (N = {N} needs {split.K}); use two_pass")
    exchange = exchange_for(x, M * split.K)
    args = dict(
        x_ptr=x, y_ptr=y, M=M, N=N, stride_x=x.stride(0), stride_y=y.stride(0), K=split.K, SEG=split.SEG,
        word_ptr=exchange.words, epoch=exchange.next_epoch(), **fusion_args(fusion, x),
        BLOCK=config.block, VEC=vector_elems(x.dtype), K_POW2=split.K_POW2,
        num_warps=config.num_warps,
    )
    settings = {"BLOCK": config.block, "K": split.K, "SEG": split.SEG, "num_warps": config.num_warps}
    if interpreted():
        # Programs run one after another here: all publish in one launch, then all combine in a second.
        grid = (min(M, 2) * split.K,)
        compiled = [launch_kernel(split_kernel, grid, **args, PHASE=phase) for phase in (PUBLISH, COMBINE)]
        return y, Launch({**settings, "groups": min(M, 2)}, compiled)
    key = (x.device, x.dtype, config, args["K_POW2"], args["HAS_SCALE"], args["HAS_MASK"], args["CAUSAL"], args["LOG"])
    if key not in OCCUPANCY:
        compiled = split_kernel.warmup(**args, PHASE=BOTH, grid=(1,))
        compiled._init_handles()
        OCCUPANCY[key] = occupancy(compiled, config.num_warps, torch.cuda.get_device_properties(x.device))
    resident = sm_count(x.device) * min(config.per_sm, OCCUPANCY[key])
    if resident < split.K:
        raise ValueError(
            f"split needs the {split.K} programs of a row of N = {N} on the GPU at once, and this GPU holds "
            f"{resident}; use variant='two_pass' for rows this wide"
        )
    # As many groups as fit on the GPU at once, and whose segments fit in L2 until their second read.
    in_l2 = config.l2_budget // (split.K * split.SEG * x.element_size())
    groups = max(1, min(M, resident // split.K, in_l2))
    compiled = launch_kernel(split_kernel, (groups * split.K,), **args, PHASE=BOTH)
    return y, Launch({**settings, "groups": groups}, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """One read and one write from device memory, and the partials; the second read of each segment (and of its
    mask) comes from L2, where the persistent grid keeps the segments in flight."""
    one_pass = one_pass_traffic(M, N, dtype, fusion, skips_causal=False)
    partials = M * split_of(N, dtype, CONFIGS[dtype]).K * 16  # a max and a sum word per segment
    again = (("pass 2: read the segment again", M * N * elem_size(dtype), 0),) + mask_pass(fusion)
    return Traffic(one_pass.passes + (("partials (max, sum)", partials, partials),), from_l2=again)


VARIANT = Variant(
    name="split",
    summary="each row over K programs resident at once, exchanging partial max/sum; second read from L2",
    launch=launch,
    traffic=traffic,
    triton=True,
    graph_safe=False,
    max_n=MAX_SPLIT * min(c.segment_bytes // elem_size(d) for d, c in CONFIGS.items()) - 16,
)
