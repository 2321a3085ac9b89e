"""split: a wide row split over K programs that run at the same time, each holding one chunk in registers.

Each program reduces its chunk to a partial (max, sum) and publishes it in a small global buffer; when the K
partials of its row are there it combines them into the row's max and sum and normalizes the chunk it still
holds. One read of x and one write of y for rows far wider than one program's registers.

The grid is persistent — a group of K programs per row in flight, as many groups as the GPU holds at once —
because a program that waits for a partner that is not yet resident would wait forever. While it waits for row
r's partials, a program already has row r + groups loading: the exchange's latency hides behind those bytes.

Rows of any length and alignment move in 16-byte vectors: each row is read from the 16-byte boundary at or
before its start, so odd widths (N = 50257) do not fall back to 2-byte accesses. The main store writes the
vectors that lie wholly inside the row; the at most two partial vectors at the row's ends are stored element
by element.

Triton's interpreter runs programs one after another, so there the kernel runs as two launches: every program
publishes, then every program combines and stores (the waits then find every partial already there).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from . import PLAIN, Fusion, Launch, Traffic, Variant, elem_size, interpreted, one_pass_traffic
from .masking import fusion_args, scale_and_mask

# (chunk elements, num_warps, programs per SM) by dtype: each thread keeps CHUNK / (32 · num_warps) values of
# the chunk it normalizes (fp32) and as many of the next row's chunk (input dtype) in registers.
CONFIGS = {
    torch.float32: (8192, 16, 2),
    torch.bfloat16: (16384, 16, 1),
    torch.float16: (16384, 16, 1),
}
MAX_SPLIT = 64  # chunks per row: the widest row is MAX_SPLIT · CHUNK elements (the group must fit on the GPU)
# PHASE: the whole kernel (on a GPU), or one of its halves, one launch each (interpreted)
BOTH, PUBLISH, COMBINE = tl.constexpr(0), tl.constexpr(1), tl.constexpr(2)


@triton.jit(do_not_specialize=["epoch"])  # a new epoch every launch: one compiled kernel for all
def split_kernel(x_ptr, y_ptr, M, N, stride_x, stride_y, x_misalign, K, word_ptr, epoch,
                 scale, mask_ptr, mask_stride, causal_m,
                 CHUNK: tl.constexpr, VEC: tl.constexpr, K_POW2: tl.constexpr, PHASE: tl.constexpr,
                 REREAD: tl.constexpr,
                 HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr):
    k = tl.program_id(0) % K  # which chunk of its rows this program holds
    group = tl.program_id(0) // K
    n_groups = tl.num_programs(0) // K
    lanes = k * CHUNK + tl.arange(0, CHUNK)  # positions counted from the 16-byte boundary before the row
    peers = tl.arange(0, K_POW2)
    ends = tl.arange(0, 2 * VEC)
    tag = epoch.to(tl.int64) << 32
    x, off = load_chunk(x_ptr, group, M, stride_x, x_misalign, N, lanes, VEC)
    for row in range(group, M, n_groups):
        r = tl.cast(row, tl.int64)  # row · stride passes 2^31 on large tensors
        cols = lanes - off  # column in the row; < 0 or ≥ N on lanes that hold the neighbouring rows
        inside = (cols >= 0) & (cols < N)
        # Lanes outside the row become -inf: they never win the max and add exp(-inf) = 0 to the sum.
        xf = tl.where(inside, x.to(tl.float32), -float("inf"))  # fp32 whatever the input dtype
        xf = scale_and_mask(xf, r, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                            HAS_SCALE, HAS_MASK, CAUSAL)
        chunk_max = tl.max(xf, axis=0)
        # Shift by the chunk's max so exp never overflows; an all -inf chunk shifts by 0 and sums to 0.
        num = tl.exp(xf - tl.where(chunk_max == -float("inf"), 0.0, chunk_max))
        words = word_ptr + 2 * (r * K + k)
        if PHASE != COMBINE:
            # Each partial travels with this launch's epoch in one 64-bit word: a relaxed atomic publishes it
            # without a fence, so this program never waits for its own stores to drain.
            tl.atomic_xchg(words, tag | as_bits(chunk_max), sem="relaxed", scope="gpu")
            tl.atomic_xchg(words + 1, tag | as_bits(tl.sum(num, axis=0)), sem="relaxed", scope="gpu")
        if not REREAD:
            # Start the next row's bytes moving before waiting for this row's partners ...
            next_x, next_off = load_chunk(x_ptr, r + n_groups, M, stride_x, x_misalign, N, lanes, VEC)
        # ... and this row's partial 16-byte vectors at its two ends (when they fall in this chunk), which
        # are stored element by element: the head vector when the row starts past a boundary, the tail vector
        # when it ends before one and is not the head.
        first_whole = tl.cdiv(off, VEC) * VEC
        end_whole = (off + N) // VEC * VEC
        end_lanes = tl.where(ends < VEC, ends, end_whole + ends - VEC)
        end_cols = end_lanes - off
        is_partial = tl.where(ends < VEC, off > 0, end_whole >= first_whole)
        at_end = (is_partial & (end_cols >= 0) & (end_cols < N)
                  & (end_lanes >= k * CHUNK) & (end_lanes < (k + 1) * CHUNK))
        end_x = tl.load(x_ptr + r * stride_x - off + end_lanes, mask=at_end, other=-float("inf"))
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
            inv_sum = 1.0 / tl.where(row_sum == 0.0, 1.0, row_sum)
            if REREAD:
                x_again, _ = load_chunk(x_ptr, r, M, stride_x, x_misalign, N, lanes, VEC)
                x_again = tl.where(inside, x_again.to(tl.float32), -float("inf"))
                x_again = scale_and_mask(x_again, r, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                                         HAS_SCALE, HAS_MASK, CAUSAL)
                y = tl.exp(x_again - shift) * inv_sum
            else:
                y = num * (tl.exp(chunk_max - shift) * inv_sum)
            y_row = y_ptr + tl.multiple_of(r * stride_y - off, VEC)  # y's rows start off past a boundary as x's
            whole = (lanes >= first_whole) & (lanes < end_whole)
            tl.store(y_row + lanes, y.to(y_ptr.dtype.element_ty), mask=whole)
            end_x = scale_and_mask(end_x.to(tl.float32), r, end_cols, at_end, scale, mask_ptr, mask_stride,
                                   causal_m, N, HAS_SCALE, HAS_MASK, CAUSAL)
            end_y = tl.exp(end_x - shift) * inv_sum
            tl.store(y_row + end_lanes, end_y.to(y_ptr.dtype.element_ty), mask=at_end)
        if REREAD:
            next_x, next_off = load_chunk(x_ptr, r + n_groups, M, stride_x, x_misalign, N, lanes, VEC)
        x = next_x
        off = next_off


@triton.jit
def as_bits(value):
    """An fp32 scalar's 32 bits in the low half of an int64."""
    return value.to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF


@triton.jit
def from_bits(word):
    """The fp32 in the low 32 bits of int64 words."""
    return word.to(tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def load_chunk(x_ptr, row, M, stride_x, x_misalign, N, lanes, VEC: tl.constexpr):
    """This program's lanes of `row`, read in whole 16-byte vectors from the boundary at or before the row's
    start (lanes beyond the row hold its neighbours' values, or -inf), and how far past that boundary the row
    starts. A row past M loads nothing."""
    row = row.to(tl.int64)
    off = ((x_misalign + row * stride_x) % VEC).to(tl.int32)
    vec_start = tl.multiple_of(row * stride_x - off, VEC)
    # A vector that holds any element of the row is read whole: it never crosses a page, so it is mapped.
    wanted = (lanes < tl.cdiv(off + N, VEC) * VEC) & (row < M)
    return tl.load(x_ptr + vec_start + lanes, mask=wanted, other=-float("inf")), off


@dataclass(frozen=True)
class SplitConfig:
    chunk: int  # elements of a row one program holds (a power of two)
    num_warps: int
    per_sm: int  # programs per SM in the persistent grid, at most what the compiled kernel's occupancy allows
    reread: bool = False


@dataclass
class Exchange:
    """The words programs exchange partials through, reused from launch to launch on one device and stream.

    Two int64 words per chunk of a row, its max and its sum: an fp32 in the low half, the launch's epoch in the
    high half. A word is this launch's when it carries this launch's epoch: earlier launches left smaller
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


def exchange_for(x: torch.Tensor, chunks: int) -> Exchange:
    """The exchange of x's device and current stream, with room for `chunks` partials."""
    stream = torch.cuda.current_stream(x.device).cuda_stream if x.is_cuda else 0
    key = (x.device, stream)
    found = EXCHANGES.get(key)
    if found is None or found.words.numel() < 2 * chunks:
        size = max(2 * chunks, 2 * found.words.numel() if found else 0)
        found = EXCHANGES[key] = Exchange(torch.zeros(size, dtype=torch.int64, device=x.device),
                                          found.epoch if found else 0)
    return found


def vector_elems(dtype: torch.dtype) -> int:
    return 16 // elem_size(dtype)


def split_count(N: int, dtype: torch.dtype, chunk: int) -> int:
    """K, the programs a row is split over: a row whose start is off a 16-byte boundary spans up to VEC - 1
    more lanes (contiguous rows start on one when N is a multiple of VEC)."""
    vec = vector_elems(dtype)
    return triton.cdiv(N + (vec - 1 if N % vec else 0), chunk)


def occupancy(compiled, num_warps: int, props) -> int:
    """Programs of a compiled kernel one SM (of torch.cuda.get_device_properties) holds at once: by registers,
    threads and shared memory."""
    regs_per_warp = triton.cdiv(compiled.n_regs * 32, 256) * 256  # allocated per warp, in units of 256
    by_regs = 4 * ((props.regs_per_multiprocessor // 4) // regs_per_warp) // num_warps  # 4 sub-partitions
    by_threads = props.max_threads_per_multi_processor // (32 * num_warps)
    shared = compiled.metadata.shared
    by_shared = props.shared_memory_per_multiprocessor // (shared + 1024) if shared else by_threads
    return min(by_regs, by_threads, by_shared, 32)


def launch(x: torch.Tensor, fusion: Fusion = PLAIN, config: SplitConfig | None = None) -> tuple[torch.Tensor, Launch]:
    config = config or SplitConfig(*CONFIGS[x.dtype])
    M, N = x.shape
    vec = vector_elems(x.dtype)
    if (x.data_ptr() // x.element_size()) % vec or (x.stride(0) - N) % vec:
        # Each row is read and written from the same offset past a 16-byte boundary: x must start where y does.
        x = x.contiguous()
    y = torch.empty((M, N), dtype=x.dtype, device=x.device)
    K = split_count(N, x.dtype, config.chunk)
    exchange = exchange_for(x, M * K)
    args = dict(
        x_ptr=x, y_ptr=y, M=M, N=N, stride_x=x.stride(0), stride_y=y.stride(0), x_misalign=0, K=K,
        word_ptr=exchange.words, epoch=exchange.next_epoch(), **fusion_args(fusion, x),
        CHUNK=config.chunk, VEC=vec, K_POW2=triton.next_power_of_2(K), REREAD=config.reread,
        num_warps=config.num_warps,
    )
    settings = {"CHUNK": config.chunk, "K": K, "num_warps": config.num_warps}
    if interpreted():
        # Programs run one after another here: all publish in one launch, then all combine in a second.
        grid = (min(M, 2) * K,)
        compiled = [split_kernel[grid](**args, PHASE=phase) for phase in (PUBLISH, COMBINE)]
        return y, Launch({**settings, "groups": grid[0] // K}, compiled)
    key = (x.device, x.dtype, config, args["K_POW2"], args["HAS_SCALE"], args["HAS_MASK"], args["CAUSAL"])
    if key not in OCCUPANCY:
        compiled = split_kernel.warmup(**args, PHASE=BOTH, grid=(1,))
        compiled._init_handles()
        OCCUPANCY[key] = occupancy(compiled, config.num_warps, torch.cuda.get_device_properties(x.device))
    resident = torch.cuda.get_device_properties(x.device).multi_processor_count * min(config.per_sm, OCCUPANCY[key])
    if resident < K:
        raise ValueError(
            f"split needs the {K} programs of a row of N = {N} on the GPU at once, and this GPU holds {resident}; "
            "use variant='two_pass' for rows this wide"
        )
    groups = min(M, resident // K)
    compiled = split_kernel[(groups * K,)](**args, PHASE=BOTH)
    return y, Launch({**settings, "groups": groups}, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    one_pass = one_pass_traffic(M, N, dtype, fusion)
    K = split_count(N, dtype, CONFIGS[dtype][0])
    partials = M * K * 16  # a max and a sum word per chunk, written once and read back (from L2, mostly)
    return Traffic(one_pass.passes + (("partials (max, sum)", partials, partials),))


VARIANT = Variant(
    name="split",
    summary="each row split over K programs resident at once, exchanging partial max/sum: one read, one write",
    launch=launch,
    traffic=traffic,
    triton=True,
    max_n=MAX_SPLIT * min(chunk for chunk, _, _ in CONFIGS.values()),
)
