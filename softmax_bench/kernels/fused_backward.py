"""fused's backward: the rows of y and dy in registers; one read of each, one write of dx.

Two rows held where the forward holds one, so half its widest row: at N = 16384 and 32 warps a thread holds
16 + 16 fp32 values. Narrow rows share a program, as in the forward, but more of them.
"""

from __future__ import annotations

from functools import lru_cache

import torch
import triton
import triton.language as tl

from . import (PLAIN, Backward, Fusion, Launch, backward_traffic, cdiv, config_shape, launch_kernel,
               next_power_of_2, output_like)
from .fused import MAX_N as FORWARD_MAX_N
from .masking import (first_row, fusion_args, input_gradient, keeps_none, kept_vectors, mask_rows, row_sum_terms,
                      rows_differ)

MAX_N = FORWARD_MAX_N // 2
# A program takes rows enough for PROGRAM_ELEMS values of y and as many of dy. Shorter rows: warps enough that a
# thread holds one 16-byte vector of each (32 warps for fp32, 16 for 16-bit dtypes; 4 at least). A row a program:
# 16 warps, more where a thread would hold more than MAX_PER_THREAD values of each. Measured over programs of
# 2048–8192 values in 8–32 warps at every width of the default grid on the H200, with evict_last loads; fp32 rows of
# 4096 took 32 warps until 4096×4000 ran at 101.9 % of a copy with them and 105.4 with 16 (32768×4096: 104.0
# against 103.3) (scripts/backward-tiles.py, docs/perf-notes.md).
PROGRAM_ELEMS = 4096
MAX_PER_THREAD = 16
# A masked or causal log_softmax's rows up to MASKED_LOG_HALVED_UP_TO wide: half those warps, two 16-byte vectors of
# each a thread. On the H200 its backward ran 2–4 points of a copy faster so, ahead of torch.compile's where it had
# led (causal and scaled-masked logs at 131072×1024 and 262144×512, both dtypes); the plain log's and softmax's ran
# as fast or up to 1.1 points slower, at 512–4096 (scripts/backward-tiles.py, fortieth session).
MASKED_LOG_HALVED_UP_TO = 1024
# The loads keep y and dy in L1 and L2 ahead of other lines (tl.load's evict_last), as Inductor's backward does:
# 1.3–2 % faster on the H200. They leave those lines there after the kernel, which costs a next kernel that
# reuses 24–40 MB through L2 1–6 µs, as Inductor's does too (scripts/l2-after.py, docs/perf-notes.md).
EVICT = "evict_last"
# Causal rows whose queries keep no key (the first causal_m − N when causal_m > N): a program of only such rows
# writes their zero gradient and reads nothing, as the forward's (fused.SKIP_MASKED_PROGRAMS). At the grid's narrow
# causal cells (M ≫ N) that is all but the last N rows.
SKIP_MASKED_PROGRAMS = True
# A causal row's y read only up to its diagonal (in whole 16-byte vectors), and its dy too for softmax: past it y
# is 0 (-inf for log_softmax), as the forward wrote it, and the gradient is 0. With SKIP_MASKED_PROGRAMS, on an H100
# (fifty-first session, ab-causal-backward.py, bit for bit whole rows' dx): fp32 262144×512 3.10× (softmax) and
# 3.11× (log) faster than whole rows, bf16 32768×4096 2.63× and 2.48×, fp32 16384×8192 1.97× and 1.69×, bf16
# 8192×16384 1.13× and 1.03×; no cell slower.
CAUSAL_READS_KEPT = True
# Causal rows that read what they keep (CAUSAL_READS_KEPT) cost their programs from nothing to whole rows of y and
# dy: programs run them last to first, where their kept shares differ by more than a quarter of N (rows_differ),
# so that the longest start first and the shortest fill the last wave, as the forward's (fused.HEAVIEST_FIRST).
# On an H100 (fifty-second session, ab-heaviest-first-backward.py, bit for bit row order's dx, % of the backward's
# own roofline, softmax and log): bf16 4096×4000 100.3 → 101.8 and 102.0 → 104.5, 33554×4000 +5.3 and +5.6,
# 16384×8192 +4.6 and +5.2; fp32 4096×4000 101.7 → 114.4 and 106.3 → 111.1, 33554×4000 +4.5 and +3.8, 16384×8192
# +3.4 and +3.2. On the H200: not measured.
HEAVIEST_FIRST = True


@triton.jit
def fused_backward_kernel(y_ptr, dy_ptr, dx_ptr, M, N, stride_y, stride_dy, stride_dx,
                          scale, mask_ptr, mask_stride, causal_m,
                          BLOCK_N: tl.constexpr, ROWS: tl.constexpr, EVICT: tl.constexpr,
                          HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, LOG: tl.constexpr,
                          mask_group=1, mask_period=0, MASK_SHARED: tl.constexpr = False,
                          SKIP_MASKED: tl.constexpr = False, READ_KEPT: tl.constexpr = False,
                          REVERSED: tl.constexpr = False):
    first = first_row(ROWS, REVERSED)  # (REVERSED: READ_KEPT, HEAVIEST_FIRST)
    rows = first + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows < M)[:, None] & (cols < N)[None, :]
    rows = rows.to(tl.int64)[:, None]  # 64-bit: row · stride passes 2^31 on large tensors
    cols = cols[None, :]
    skipped = False
    if SKIP_MASKED:  # (CAUSAL) rows whose queries keep no key get no gradient: zeros written, nothing read (as the
        # forward's programs of such rows: fused.SKIP_MASKED_PROGRAMS)
        skipped = keeps_none(first, ROWS, causal_m, N)
    if skipped:
        dx = tl.zeros([ROWS, BLOCK_N], tl.float32)
    else:
        # Padding adds nothing to the sum: dy is 0 there, and y is 0 (softmax) or -inf (log_softmax: e^y = 0).
        y_other = -float("inf") if LOG else 0.0
        read_y = inside
        read_dy = inside
        if READ_KEPT:  # (CAUSAL) y past a causal row's diagonal is what padding loads (0, -inf: the forward wrote
            # it), so it is not read, in whole 16-byte vectors as the forward's x; nor is dy for softmax (its terms
            # dy · y are 0 there), while log_softmax sums every dy of the row, as torch's backward does
            read_y = kept_vectors(y_ptr, rows, cols, inside, causal_m, N)
            if not LOG:
                read_dy = read_y
        y = tl.load(y_ptr + rows * stride_y + cols, mask=read_y, other=y_other, eviction_policy=EVICT).to(tl.float32)
        dy = tl.load(dy_ptr + rows * stride_dy + cols, mask=read_dy, other=0.0, eviction_policy=EVICT).to(tl.float32)
        row_sum = tl.sum(row_sum_terms(y, dy, LOG), axis=1)[:, None]  # fp32 whatever the dtype
        # (new names: a name set before `if skipped` keeps its type in either branch, and a shared mask's rows
        # are a block of pointers)
        row_mask_ptr, row_mask_stride = mask_rows(mask_ptr, mask_stride, rows, mask_group, mask_period, MASK_SHARED)
        dx = input_gradient(y, dy, row_sum, rows, cols, inside, scale, row_mask_ptr, row_mask_stride, causal_m, N,
                            HAS_SCALE, HAS_MASK, CAUSAL, LOG)
    tl.store(dx_ptr + rows * stride_dx + cols, dx.to(dx_ptr.dtype.element_ty), mask=inside)


def launch_config(M: int, N: int, dtype: torch.dtype = torch.float32, masked_log: bool = False) -> dict:
    """BLOCK_N, ROWS, num_warps and the loads' EVICT for an M×N y of `dtype` (a masked or causal log_softmax's with
    `masked_log`); one dict for every M of a class, shared: read it, do not change it."""
    return _launch_config(*config_shape(M, N, PROGRAM_ELEMS), dtype.itemsize, masked_log)


@lru_cache(maxsize=1024)
def _launch_config(M: int, N: int, itemsize: int, masked_log: bool = False) -> dict:
    block_n = next_power_of_2(N)
    rows = min(max(1, PROGRAM_ELEMS // block_n), next_power_of_2(M))
    if rows > 1 or block_n < PROGRAM_ELEMS:
        vectors = 2 if masked_log and block_n <= MASKED_LOG_HALVED_UP_TO else 1  # 16-byte vectors of y a thread
        num_warps = max(4, block_n * rows * itemsize // (32 * 16 * vectors))
    else:
        num_warps = max(16, block_n // (32 * MAX_PER_THREAD))
    return {"BLOCK_N": block_n, "ROWS": rows, "num_warps": num_warps, "EVICT": EVICT}


def is_masked_log(fusion: Fusion) -> bool:
    """Whether a backward is a masked or causal log_softmax's (launch_config's masked_log)."""
    return fusion.log and (fusion.mask is not None or fusion.causal_m is not None)


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN,
           config: dict | None = None) -> tuple[torch.Tensor, Launch]:
    """config: BLOCK_N, ROWS, num_warps and EVICT to launch with (None: launch_config's; scripts/backward-tiles.py)."""
    M, N = y.shape
    dx = output_like(y)
    config = config or launch_config(M, N, y.dtype, is_masked_log(fusion))
    grid = (cdiv(M, config["ROWS"]),)
    skip = {"SKIP_MASKED": True} if SKIP_MASKED_PROGRAMS and (fusion.causal_m or 0) > N else {}
    kept = {"READ_KEPT": True} if CAUSAL_READS_KEPT and fusion.causal_m is not None else {}
    reversed_rows = {"REVERSED": True} if kept and HEAVIEST_FIRST and rows_differ(fusion.causal_m, N) else {}
    compiled = launch_kernel(fused_backward_kernel, grid, y, dy, dx, M, N, y.stride(0), dy.stride(0), dx.stride(0),
                             **fusion_args(fusion, y), **config, **skip, **kept, **reversed_rows)
    return dx, Launch(config, [compiled])


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN):
    """backward_traffic; a causal row read whole unless CAUSAL_READS_KEPT."""
    return backward_traffic(M, N, dtype, fusion, skips_causal=CAUSAL_READS_KEPT)


BACKWARD = Backward(
    name="fused",
    summary="the rows of y and dy in registers: one read of each, one write of dx",
    launch=launch,
    traffic=traffic,
    triton=True,
    max_n=MAX_N,
)
