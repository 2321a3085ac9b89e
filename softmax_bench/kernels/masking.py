"""The fused prologue every Triton variant applies to what it loads (scale, keep-mask, causal mask, padding), and
the epilogue that makes softmax or log_softmax of the row's max and sum."""

import os
from dataclasses import replace

import torch
import triton
import triton.language as tl

from . import Fusion, interpreted, launch_kernel, scratch

try:  # the GPU's approximate log (lg2.approx · ln 2)
    from triton.language.extra.cuda.libdevice import fast_logf
except ImportError:  # pragma: no cover - depends on the installed Triton
    fast_logf = None


@triton.jit
def scale_and_mask(x, rows, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                   HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
                   bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0,
                   CAUSAL_BITS: tl.constexpr = False, POSITIVE_SCALE: tl.constexpr = False,
                   ROW_BIAS: tl.constexpr = False, ROW_MASK: tl.constexpr = False):
    """x (fp32) times scale, plus the bias, with padding and masked-out positions at -inf so they add
    exp(-inf) = 0 to the sum.

    rows (int64) and cols broadcast against x; inside is False on padding lanes, which were loaded as -inf.
    A bias at or below BIAS_MIN (its dtype's minimum, -inf included) masks its position out. A causal row's bias
    is read up to its diagonal only. ROW_BIAS: bias_ptr is the one bias row of all the rows (fused's BIAS_ONCE);
    ROW_MASK: mask_ptr the one mask row (fused's MASK_ONCE).
    A plain softmax compiles to nothing here: on the H200 even an always-true select cost two_pass a third of its
    bandwidth on misaligned bf16 rows (docs/perf-notes.md).
    """
    if HAS_SCALE:  # in fp32 however the launcher typed it (inductor types a float argument fp64)
        x = x * tl.cast(scale, tl.float32)
    if POSITIVE_SCALE and not (HAS_MASK or CAUSAL or HAS_BIAS):
        # (a scale > 0 alone) padding, loaded as -inf, stays -inf: no select, whose predicates had ptxas issue
        # an fp32 tile's loads in waves (fp32 8192: 2, 3, 3)
        return x
    if CAUSAL_BITS and CAUSAL and not HAS_MASK and not HAS_BIAS:
        # (fused.CAUSAL_BITS) -inf past the diagonal as bits: all ones there, from the sign of last − col, no
        # compare; padding columns lie past it too (rows past M are never stored)
        dropped = (last_kept(rows, causal_m, N) - cols) >> 31
        bits = x.to(tl.int32, bitcast=True)
        return ((bits & ~dropped) | (-8388608 & dropped)).to(tl.float32, bitcast=True)  # -inf's bits, 0xff800000
    if HAS_SCALE or HAS_MASK or CAUSAL or HAS_BIAS:
        if HAS_BIAS and not ROW_BIAS:
            # -inf where the bias is not read (outside the row, past a causal row's diagonal): its compare drops
            # those positions, so keep needs neither `inside` nor the causal compare again (sm_90: 12 SASS
            # instructions a thread fewer in fused's biased bf16 programs, seventy-first session)
            read = kept(rows, cols, inside, mask_ptr, mask_stride, causal_m, N, False, CAUSAL)
            bias = tl.load(bias_ptr + rows * bias_stride + cols, mask=read, other=-float("inf")).to(tl.float32)
            keep = ~(bias <= BIAS_MIN)  # a NaN bias is kept: NaN in a row gives NaN in that row
            if HAS_MASK:
                keep = keep & kept(rows, cols, inside, mask_ptr, mask_stride, causal_m, N, True, False, ROW_MASK)
            x = x + bias
        else:
            keep = kept(rows, cols, inside, mask_ptr, mask_stride, causal_m, N, HAS_MASK, CAUSAL, ROW_MASK)
            if HAS_BIAS:  # ROW_BIAS (no causal): one bias row for every row, read once, broadcast over them
                bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
                keep = keep & ~(bias <= BIAS_MIN)
                x = x + bias
        x = tl.where(keep, x, -float("inf"))  # padding back to -inf whatever the sign of scale
    return x


@triton.jit
def mask_rows(mask_ptr, mask_stride, rows, mask_group, mask_period, MASK_SHARED: tl.constexpr,
              GROUP_SHIFT: tl.constexpr = -1):
    """(pointer, row stride) of the mask for x's rows `rows`, as the other helpers take them: the mask's own where
    each row of x has a row of mask; where consecutive rows share one (mask_group of them: a key-padding mask
    [B, 1, 1, S] over [B, H, S, S] scores) and the mask's rows repeat (every mask_period: a [1, 1, S, S] mask over
    a batch), each row's mask row as a pointer, with row stride 0. In 32 bits: rows < M < 2^31. GROUP_SHIFT ≥ 0
    (group_shift): mask_group is 2^GROUP_SHIFT and the rows do not repeat, so the row is a shift."""
    if MASK_SHARED:  # resolved when compiling: a plain mask's code is what it was
        if GROUP_SHIFT >= 0:
            # a shift for the division and modulo by runtime values: about 50 SASS instructions a thread of fused's
            # key-padded bf16 programs (434 → 389 at 2048), bound by issuing them on the H200 (seventieth session)
            shared = rows.to(tl.int32) >> GROUP_SHIFT
        else:
            shared = (rows.to(tl.int32) // mask_group) % mask_period
        mask_ptr = mask_ptr + shared.to(tl.int64) * mask_stride
        mask_stride = 0
    return mask_ptr, mask_stride


@triton.jit
def kept(rows, cols, inside, mask_ptr, mask_stride, causal_m, N, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr,
         ROW_MASK: tl.constexpr = False):
    """True where the keep-mask and the causal mask keep a position inside the row (ROW_MASK: mask_ptr is the one
    mask row of all the rows, read once and broadcast over them)."""
    keep = inside
    if HAS_MASK:
        if ROW_MASK:
            keep = keep & (tl.load(mask_ptr + cols, mask=cols < N, other=0) != 0)
        else:
            # the load reads 0 outside, so its compare is False wherever `inside` is: no AND with it, 16 SASS
            # instructions a thread fewer in fused's key-padded bf16 programs (sm_90, seventy-first session)
            keep = tl.load(mask_ptr + rows * mask_stride + cols, mask=inside, other=0) != 0
    if CAUSAL:
        keep = keep & (cols <= last_kept(rows, causal_m, N))
    return keep


@triton.jit
def last_kept(rows, causal_m, N):
    """The last column each row's query keeps (< 0: none), bottom-right aligned: query i = row mod causal_m keeps
    keys j ≤ i + (N − causal_m). In 32 bits (rows < M < 2^31): the int64 remainder and compare an element cost
    fused's bf16 32-wide causal tile 144 of its 528 SASS instructions a thread (sm_90), and the narrow causal cells
    are bound by issuing them (sixteenth session)."""
    return (rows.to(tl.int32) % causal_m) + (N - causal_m)


@triton.jit
def first_row(ROWS: tl.constexpr, REVERSED: tl.constexpr):
    """The first of this program's ROWS rows: programs in row order, or (REVERSED: causal rows' HEAVIEST_FIRST)
    the last rows first."""
    program = tl.program_id(0)
    if REVERSED:
        program = tl.num_programs(0) - 1 - program
    return program * ROWS


@triton.jit
def keeps_none(first, ROWS: tl.constexpr, causal_m, N):
    """Whether causal rows first … first + ROWS − 1 (a program's) all keep no column: its last row's query keeps
    none, and no row wrapped past causal_m (there, a query keeping every column)."""
    return (first % causal_m) + (ROWS - 1) < causal_m - N


@triton.jit
def kept_vectors(ptr, rows, cols, inside, causal_m, N):
    """Where a causal row is read through ptr: up to its diagonal in whole 16-byte vectors of ptr's dtype (what is
    read past the diagonal within the last one is masked, or known, where it is used)."""
    vec = 128 // ptr.dtype.element_ty.primitive_bitwidth
    return inside & ((cols // vec) * vec <= last_kept(rows, causal_m, N))


# 2^t flushing a subnormal result to 0 (ex2.approx.ftz.f32): tl.exp's ex2.approx.f32 is the same instruction with
# ptxas's denormal fix-up around it, a compare, a select and two multiplies an element (sm_90: fused's bf16 4000-wide
# causal tile, 32 elements a thread, takes 696 SASS instructions of which 164 FMUL, 36 FSETP, 35 FSEL). The two
# agree bit for bit wherever 2^t ≥ 2^-126, i.e. x − max ≥ −87.3; below, a probability under 1.2e-38 is 0. The
# interpreter runs no inline PTX.
if os.environ.get("TRITON_INTERPRET") == "1":
    @triton.jit
    def exp2_ftz(t):
        return tl.exp2(t)
else:
    @triton.jit
    def exp2_ftz(t):
        return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [t], dtype=tl.float32, is_pure=True,
                                         pack=1)


# log s of a row's sum (1 ≤ s ≤ N): tl.log is some 30 instructions; where a thread holds a few short rows, their
# logs cost log_softmax 3.8 % of softmax's time on the H200 (bf16 262144×512, docs/perf-notes.md). The approximate
# one is off by at most 2^-22 in log2 s, under an fp32 ulp of log s past s = 2. The interpreter runs no libdevice.
# Either is defined under its own name: inductor copies the functions a kernel calls into its code by their def
# names (a compiled graph holding fused's kernel failed on "log_of_sum is not defined" when it was an alias).
if fast_logf is None or os.environ.get("TRITON_INTERPRET") == "1":
    @triton.jit
    def log_of_sum(s):
        return tl.log(s)
else:
    @triton.jit
    def log_of_sum(s):
        return fast_logf(s)


@triton.jit
def normalizer(s, LOG: tl.constexpr):
    """What `normalized` needs of a row's sum s of exp(x − shift): 1/s, or log s for log_softmax. An all -inf row
    (s = 0) gives zeros, or -inf: never 0/0 or -inf − -inf."""
    s = tl.where(s == 0.0, 1.0, s)
    if LOG:
        return log_of_sum(s)
    else:
        return 1.0 / s


@triton.jit
def normalized(x, shift, norm, LOG: tl.constexpr):
    """softmax exp(x − shift) / s, or log_softmax x − shift − log s, in fp32 (norm from `normalizer`)."""
    if LOG:
        return x - shift - norm
    else:
        return tl.exp(x - shift) * norm


@triton.jit
def row_sum_terms(y, dy, LOG: tl.constexpr):
    """What the backward sums over a row (fp32): dy · y for softmax, dy for log_softmax."""
    if LOG:
        return dy
    else:
        return dy * y


@triton.jit
def input_gradient(y, dy, row_sum, rows, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                   HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr):
    """dx (fp32) from y, dy and the row's sum of `row_sum_terms`: scale · y · (dy − Σ) for softmax, whose y is 0
    where masked out (so is dx); scale · (dy − e^y · Σ) for log_softmax, set to 0 where masked out (y is -inf
    there, e^y = 0, and dx would be dy: torch's masked_fill gives those positions no gradient either)."""
    scale = tl.cast(scale, tl.float32)
    if LOG:
        dx = dy - tl.exp(y) * row_sum
        if HAS_MASK or CAUSAL:
            dx = tl.where(kept(rows, cols, inside, mask_ptr, mask_stride, causal_m, N, HAS_MASK, CAUSAL), dx, 0.0)
        if HAS_SCALE:
            dx = dx * scale
    elif HAS_SCALE:  # y · (dy · scale − Σ · scale): an fma and a multiply an element, as the plain form's two ops
        dx = y * (dy * scale - row_sum * scale)
    else:
        dx = y * (dy - row_sum)
    return dx


# Copies made 8 bytes at a time (phase_copies_words_kernel) where the shared rows allow: contiguous, 8-byte aligned,
# a whole number of 8 bytes in all (else phase_copies_kernel, an element at a time). Off until it has run on a GPU:
# tested in the interpreter and compiled for sm_90 only (eighty-third session; session83/next.sh `words` A/Bs it).
COPIES_BY_WORDS = False
WORDS_BLOCK = 1024  # 8-byte words of a copy a program


def copies_by_words(rows: torch.Tensor) -> bool:
    return (COPIES_BY_WORDS and rows.is_contiguous() and rows.data_ptr() % 8 == 0
            and rows.numel() * rows.element_size() % 8 == 0)


# phase_copies_kernel's (BLOCK, num_warps) by the rows' bytes an element, else (4096, 4): a byte mask's copies of 128
# rows of 50257 took 36.8 µs in 4096 · 4 and 31.3 in 2048 · 8 (8 copies; 4 copies: 20.3 and 16.4), a bf16 bias's
# about the same in either (an H100, eighty-third session's copies-scan.py).
COPIES_LAUNCH = {1: (2048, 8)}


def copied_by_kernel(rows: torch.Tensor) -> bool:
    """Whether phase copies of `rows` are made by a Triton kernel (a GPU's rows, or the interpreter's on a CPU), or by
    torch: meta tensors (a launch's layout alone), compiling for sm_90 on a CPU."""
    return rows.is_cuda or (interpreted() and rows.device.type == "cpu")


def phased_rows(rows: torch.Tensor, vec: int) -> torch.Tensor:
    """A shared mask's (bias's) G rows of N as `vec` copies of each, copy j shifted j elements into a row of L (a
    multiple of vec and of 16 bytes): [G · vec, L], row k · vec + j holding row k at columns j … j + N − 1, zeros
    around it. A row of x that starts j elements past a 16-byte boundary finds copy j of its shared row as far past
    one, so that a kernel reads it in vectors beside x's (cluster's MASK_PHASED, BIAS_PHASED): vec/K of the shared
    rows' bytes more, written and read, for rows/K."""
    G, N = rows.shape
    # L, a multiple of 16 elements: of x's vector (vec, 4 or 8), of the rows' 16 bytes, and what Triton's launch
    # specializes on, so that phase_copies_kernel's stores are 16 bytes wide (a bf16 L of 8 · odd: one element a store)
    L = -(-(N + vec) // 16) * 16
    phased = torch.empty(G * vec, L, dtype=rows.dtype, device=rows.device)
    if not copied_by_kernel(rows):
        phased.zero_().as_strided((G, vec, N), (vec * L, L + 1, 1)).copy_(rows[:, None, :].expand(G, vec, N))
        return phased
    scratch(phased)  # a kernel writes every element of the copies, the zeros too: a replayed call allocates its own
    if copies_by_words(rows):
        size = rows.element_size()
        words = L * size // 8  # every word of a copy, the zeros too
        launch_kernel(phase_copies_words_kernel, (G * vec, triton.cdiv(words, WORDS_BLOCK)),
                      rows.reshape(-1).view(torch.int64), phased.view(-1).view(torch.int64), N,
                      rows.numel() * size // 8, words, SIZE=size, VEC=vec, BLOCK=WORDS_BLOCK, num_warps=4)
    else:  # by elements
        block, warps = COPIES_LAUNCH.get(rows.element_size(), (4096, 4))  # every column, the zeros too
        launch_kernel(phase_copies_kernel, (G * vec, triton.cdiv(L, block)), rows, phased, N, rows.stride(0),
                      rows.stride(1), L, VEC=vec, BLOCK=block, num_warps=warps)
    return phased


@triton.jit
def phase_copies_words_kernel(words_ptr, copies_ptr, N, total_words, L_words, SIZE: tl.constexpr, VEC: tl.constexpr,
                              BLOCK: tl.constexpr):
    """phase_copies_kernel's copies of contiguous rows (N elements of SIZE bytes a row) read as 8-byte words: a word
    of copy r (shared row k = r // VEC, shift j = r % VEC) is the 8 bytes of the rows that start at byte
    k · N · SIZE − j · SIZE + 8w, which is two aligned words of the rows, funnel-shifted by that start's byte offset
    mod 8 (the same for every word of the copy). Bytes outside the row's N elements are zeros."""
    r = tl.program_id(0)
    k, j = r // VEC, r % VEC
    w = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    start = k.to(tl.int64) * N * SIZE - j * SIZE  # may be negative: the first row's copies start before it
    q = (start >> 3) + w  # floor division, also for a negative start
    bits = ((start & 7) * 8).to(tl.uint64)
    inside = w // 2 < L_words // 2  # (L_words is even: the stores in pairs, 16 bytes)
    lo = tl.load(words_ptr + q, mask=inside & (q >= 0) & (q < total_words), other=0).to(tl.uint64, bitcast=True)
    hi = tl.load(words_ptr + q + 1, mask=inside & (q + 1 >= 0) & (q + 1 < total_words),
                 other=0).to(tl.uint64, bitcast=True)
    word = tl.where(bits == 0, lo, (lo >> bits) | (hi << (64 - bits)))  # (a shift by 64: undefined in LLVM)
    # the copy's bytes 8w … 8w + 7 that hold the row: from byte j · SIZE to (N + j) · SIZE
    first = tl.minimum(tl.maximum(j * SIZE - 8 * w, 0), 8)
    last = tl.minimum(tl.maximum((N + j) * SIZE - 8 * w, 0), 8)
    ones = tl.full([BLOCK], 1, tl.int64)
    keep = (tl.where(last == 8, -1, (ones << (8 * last)) - 1)  # the bytes under `last`, less those under `first`
            - tl.where(first == 8, -1, (ones << (8 * first)) - 1)).to(tl.uint64, bitcast=True)
    row_start = tl.multiple_of(r.to(tl.int64) * L_words, 2)
    tl.store(copies_ptr + row_start + w, (word & keep).to(tl.int64, bitcast=True), mask=inside)


@triton.jit
def phase_copies_kernel(rows_ptr, copies_ptr, N, row_stride, col_stride, L, VEC: tl.constexpr, BLOCK: tl.constexpr):
    """phased_rows' copies, BLOCK columns of one copy a program: stores in whole 16 bytes (a copy's row starts on
    a multiple of 16 elements), loads of the shared row misaligned by the copy's shift. torch's strided copy_ of
    the same (a 1-byte store a thread for a mask) took 102 µs of key-padded bf16 8192×50257's 685 (an H100, Nsight
    Compute, seventy-eighth session)."""
    r = tl.program_id(0)
    shift = r % VEC
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    src = cols - shift
    values = tl.load(rows_ptr + (r // VEC).to(tl.int64) * row_stride + src * col_stride, mask=(src >= 0) & (src < N),
                     other=0)
    start = tl.multiple_of(r.to(tl.int64) * L, 16)
    tl.store(copies_ptr + start + cols, values, mask=cols < L)


# A 16-bit x's vector is 8 elements: its keep-mask's 8 bytes, phased, become one byte of bits (phased_bits).
BITS_BLOCK = 1024  # bytes of a copy a program of phase_bits_kernel


def phased_bits(rows: torch.Tensor, vec: int = 8) -> torch.Tensor:
    """phased_rows' copies of a shared keep-mask's G rows of N as bits, a byte for each vector of 8 lanes: [G · 8, B]
    uint8, bit i of byte v of copy k · 8 + j the mask's row k at column 8v + i − j (0 outside the row). A row of x
    that starts j elements past a 16-byte boundary finds its vector's 8 keep bits in one byte of copy j (cluster's
    MASK_BITS): an eighth of the byte copies' bytes, written and read. B, a multiple of 16, covers the byte copies'
    columns."""
    if vec != 8:
        raise ValueError(f"phase copies in bits take vectors of 8 elements (16-bit x); got {vec}")
    G, N = rows.shape
    B = -(-(N + vec) // 128) * 16  # phased_rows' L of N + vec columns rounded up to 16, in bytes of 8, to 16 bytes
    bits = torch.empty(G * vec, B, dtype=torch.uint8, device=rows.device)
    if not copied_by_kernel(rows):
        keep = torch.zeros(G, B * 8 + vec, dtype=torch.uint8, device=rows.device)
        keep[:, vec:vec + N] = rows != 0  # column c at vec + c: copy j's bit 8v + i is column 8v + i − j
        weights = (1 << torch.arange(8, device=rows.device)).to(torch.uint8)
        for j in range(vec):
            window = keep[:, vec - j:vec - j + B * 8].reshape(G, B, 8)
            bits[j::vec] = (window * weights).sum(-1, dtype=torch.uint8)
        return bits
    scratch(bits)  # every byte written, the zeros too
    launch_kernel(phase_bits_kernel, (G, triton.cdiv(B, BITS_BLOCK)), rows, bits, N, rows.stride(0), rows.stride(1),
                  B, VEC=vec, BLOCK=BITS_BLOCK, num_warps=4)
    return bits


@triton.jit
def phase_bits_kernel(rows_ptr, bits_ptr, N, row_stride, col_stride, B, VEC: tl.constexpr, BLOCK: tl.constexpr):
    """phased_bits' VEC copies of one shared row, BLOCK bytes of each a program: the row's columns 8v − 8 … 8v + 7
    read once as 16 bits, and copy j's byte v their bits 8 − j … 15 − j."""
    k = tl.program_id(0)
    v = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    i = tl.arange(0, 16)
    src = v[:, None] * 8 - 8 + i[None, :]
    keep = tl.load(rows_ptr + k.to(tl.int64) * row_stride + src * col_stride,
                   mask=(src >= 0) & (src < N) & (v < B)[:, None], other=0)
    window = tl.sum((keep != 0).to(tl.int32) << i[None, :], axis=1)
    for j in tl.static_range(VEC):
        tl.store(bits_ptr + (k * VEC + j).to(tl.int64) * B + v, ((window >> (8 - j)) & 0xFF).to(tl.uint8),
                 mask=v < B)


def phased(fusion: Fusion, vec: int, mask: bool = True, bias: bool = True, bits: bool = False) -> Fusion:
    """The fusion with its shared mask (`mask`) and its shared bias (`bias`) laid out as phased_rows
    (Fusion.mask_phased, bias_phased); `bits`: the mask as phased_bits (Fusion.mask_bits)."""
    mask, bias = mask and fusion.mask_shared, bias and fusion.bias_shared
    bits = bits and mask
    copies = phased_bits if bits else phased_rows
    return replace(fusion, mask=copies(fusion.mask, vec) if mask else fusion.mask, mask_phased=mask, mask_bits=bits,
                   bias=phased_rows(fusion.bias, vec) if bias else fusion.bias, bias_phased=bias)


def mask_expanded(fusion: Fusion, M: int) -> Fusion:
    """The fusion with a shared mask written out, a row of mask for each of x's M rows: for a kernel that takes no
    mask_group (cluster_backward's log_softmax; `expanded_mask_traffic` counts the pass)."""
    if not fusion.mask_shared:
        return fusion
    rows = torch.arange(M, device=fusion.mask.device) // fusion.mask_group
    if fusion.mask_period:
        rows %= fusion.mask_period
    return replace(fusion, mask=fusion.mask[rows], mask_group=1, mask_period=0)


def group_shift(group: int, period: int) -> int:
    """mask_rows's GROUP_SHIFT for a shared mask's (or bias's) mask_group and mask_period: log2(group) where group is
    a power of two and the rows do not repeat (period 0), else -1 (a division and a modulo; also where torch.compile
    traces them as SymInts)."""
    if not (isinstance(group, int) and isinstance(period, int)):
        return -1
    return group.bit_length() - 1 if period == 0 and group & (group - 1) == 0 else -1


def fusion_args(fusion: Fusion, x) -> dict:
    """The kernel arguments of a Fusion (the mask pointer is x, unused, when there is no mask), LOG included."""
    args = {
        "scale": float(fusion.scale),
        "mask_ptr": fusion.mask if fusion.mask is not None else x,
        "mask_stride": fusion.mask.stride(0) if fusion.mask is not None else 0,
        "causal_m": fusion.causal_m or 1,
        "HAS_SCALE": fusion.scale != 1.0,
        "HAS_MASK": fusion.mask is not None,
        "CAUSAL": fusion.causal_m is not None,
        "LOG": fusion.log,
    }
    if fusion.mask_shared:  # only then: a kernel without these arguments (cluster's) takes the rest
        args.update(mask_group=fusion.mask_group, mask_period=fusion.mask_period or 2**31 - 1, MASK_SHARED=True)
    if fusion.bias is not None:  # only then: a plain call passes no more arguments than before (its host cost)
        args.update(bias_ptr=fusion.bias, bias_stride=fusion.bias.stride(0), HAS_BIAS=True,
                    BIAS_MIN=float(torch.finfo(fusion.bias.dtype).min))
        if fusion.bias_shared:
            args.update(bias_group=fusion.bias_group, bias_period=fusion.bias_period or 2**31 - 1, BIAS_SHARED=True)
    return args


def rows_differ(causal_m: int | None, N: int) -> bool:
    """Whether causal rows of N columns, causal_m queries, keep shares of their columns that differ by more than a
    quarter of N (the shortest keeps N − causal_m): where fused's and cluster's HEAVIEST_FIRST run them last to
    first."""
    return causal_m is not None and 4 * causal_m > N
