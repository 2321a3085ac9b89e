"""online: the seed's single chunked loop. Each chunk's exponentials are stored unnormalized, against the
running max at that chunk (kept in a small scratch buffer); a final loop rescales every chunk by
exp(m_chunk - m) / sum. So the output is written twice and read once more: two reads, two writes.

log_softmax stores x − m_chunk instead, and the final loop adds m_chunk − m − log sum (an exponential stored and
its log taken back would lose what underflows).

The stored values are fp32: y itself for fp32 output, an fp32 stash beside y for 16-bit output, so that y is its
fp32 value rounded once (stored in y's 16 bits, they were rounded twice: a quarter of bf16 elements an ulp off).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from . import PLAIN, Fusion, Launch, Traffic, Variant, cdiv, elem_size, launch_kernel, mask_pass, output_like
from .masking import fusion_args, mask_rows, normalizer, scale_and_mask
from .two_pass import L2_ROW_BYTES, launch_config  # the same chunks as two_pass


@triton.jit
def online_kernel(x_ptr, y_ptr, stash_ptr, chunk_max_ptr, N, n_chunks, stride_x, stride_y, stride_stash,
                  scale, mask_ptr, mask_stride, causal_m,
                  BLOCK: tl.constexpr,
                  HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                  mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False,
                  bias_ptr=None, bias_stride=0, HAS_BIAS: tl.constexpr = False, BIAS_MIN: tl.constexpr = 0.0,
                  bias_group=1, bias_period=0, BIAS_SHARED: tl.constexpr = False):
    row = tl.program_id(0).to(tl.int64)  # 64-bit: row · stride passes 2^31 on large tensors
    mask_ptr, mask_stride = mask_rows(mask_ptr, mask_stride, row, mask_group, mask_period, MASK_SHARED)
    if HAS_BIAS:  # only then: Triton 3.6 cannot return bias_ptr's None from a function
        bias_ptr, bias_stride = mask_rows(bias_ptr, bias_stride, row, bias_group, bias_period, BIAS_SHARED)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    stash_row = stash_ptr + row * stride_stash  # fp32; y_row itself for fp32 output
    chunk_max_row = chunk_max_ptr + row * n_chunks
    m = tl.full((), -float("inf"), tl.float32)
    s = tl.full((), 0.0, tl.float32)  # fp32 whatever the input dtype
    for chunk in range(0, n_chunks):
        cols = chunk * BLOCK + tl.arange(0, BLOCK)
        inside = cols < N
        x = tl.load(x_row + cols, mask=inside, other=-float("inf")).to(tl.float32)
        x = scale_and_mask(x, row, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                           HAS_SCALE, HAS_MASK, CAUSAL, bias_ptr, bias_stride, HAS_BIAS, BIAS_MIN)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        # While every value so far is -inf, shift by 0: exp(-inf - -inf) would be NaN.
        shift = tl.where(m_new == -float("inf"), 0.0, m_new)
        e = tl.exp(x - shift)
        s = s * tl.exp(m - shift) + tl.sum(e, axis=0)
        m = m_new
        if LOG:
            tl.store(stash_row + cols, x - shift, mask=inside)
        else:
            tl.store(stash_row + cols, e, mask=inside)
        tl.store(chunk_max_row + chunk, shift)
    # The rescale loop reads what other threads of this program stored above.
    tl.debug_barrier()
    shift = tl.where(m == -float("inf"), 0.0, m)
    norm = normalizer(s, LOG)  # an all -inf row: zeros (or -inf), not 0/0
    for chunk in range(0, n_chunks):
        cols = chunk * BLOCK + tl.arange(0, BLOCK)
        inside = cols < N
        stored = tl.load(stash_row + cols, mask=inside, other=0.0)
        if LOG:
            y = stored + (tl.load(chunk_max_row + chunk) - shift - norm)
        else:
            y = stored * (tl.exp(tl.load(chunk_max_row + chunk) - shift) * norm)
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=inside)


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    M, N = x.shape
    y = output_like(x, fusion)
    stash = y if y.dtype == torch.float32 else torch.empty((M, N), dtype=torch.float32, device=x.device)
    config = launch_config(N, x.dtype)
    n_chunks = cdiv(N, config["BLOCK"])
    chunk_max = torch.empty((M, n_chunks), dtype=torch.float32, device=x.device)
    compiled = launch_kernel(online_kernel, (M,), x, y, stash, chunk_max, N, n_chunks, x.stride(0), y.stride(0),
                             stash.stride(0), **fusion_args(fusion, x), **config)
    return y, Launch(config, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    """x read and y written once; the exponentials stored in between (fp32) and read back by the rescale stay in L2
    for rows of up to two_pass's L2_ROW_BYTES of them (the same programs a row), so HBM sees neither that write nor
    that read — on the H200 rows of 8–64 KB run at 52–77 % of a copy, which four HBM passes could not. Wider rows:
    HBM."""
    nbytes = M * N * elem_size(dtype)
    n_chunks = cdiv(N, launch_config(N, dtype)["BLOCK"])
    scratch = M * n_chunks * 4
    stashed = M * N * 4
    hbm = (("loop: read x", nbytes, 0), ("chunk maxima (scratch)", scratch, scratch), ("rescale: write y", 0, nbytes))
    exponentials = (("loop: write exp(x - running max), fp32", 0, stashed), ("rescale: read them back", stashed, 0))
    if N * 4 <= L2_ROW_BYTES:
        return Traffic(hbm + mask_pass(fusion), from_l2=exponentials)
    return Traffic(hbm + exponentials + mask_pass(fusion))


VARIANT = Variant(
    name="online",
    summary="one chunked loop storing exponentials against the running max, then a rescale: two reads, two writes",
    launch=launch,
    traffic=traffic,
    triton=True,
    flops_per_element=6,  # the rescale multiplies every element once more
)
