"""The cluster's row held in shared memory: where a CTA's share of a row in registers leaves too few CTAs an SM.

cluster.launch takes this form at SHARED_ROW_AT's widths (with SHARED_ROWS). Each CTA of the cluster copies its
even share of the row (and of a 16-bit row's bias: an fp32 row's is read at each pass) into shared memory by
cp.async, 16 bytes a thread, one copy group a chunk of 32 · warps vectors, and reads it back from there: the first
pass takes each chunk's max as soon as its copies land (or, ONLINE, the max and the sum of exponentials together,
each lane's sum rescaled as its max grows: two passes over shared memory, not three), the second the sum, the third
normalizes and stores, in rolled loops. The CTAs exchange (max, sum) once, as cluster_kernel does
(cluster.exchange).

Why: a biased bf16 row of 262144 holds x and the bias, 64 KB a CTA of a 16-CTA cluster; held in registers (fp32)
that is one CTA an SM, and on the H200 84 % of its roofline. In shared memory it is three CTAs an SM, one CTA's
wait covered by another's passes (docs/perf-notes.md, sixty-sixth and sixty-eighth sessions: session 66's probe,
landing-row-probe.py, 93.3 against 84.4; causal fp32 262144 with ONLINE 95.7 against 92.1).

What it takes: rows on the 16-byte grid whose width is the cluster's CTAs times a whole number of chunks, and of
the fused forms a scale, a causal mask, a bias of x's dtype (no keep-mask; rows of x sharing a bias row only with
SHARED_BIAS_ROWS) and the log.
y is computed in fp32 and rounded once to its dtype, as the other variants' is.
"""

from __future__ import annotations

import torch

from . import Fusion, Launch, cluster, launch_kernel
from .aligned import vector_elems
from .cluster import async_copy, form_of, gluon, on_grid
from .masking import fusion_args, mask_rows

# (form, dtype): {N: (CTAs, warps, ONLINE)}: where rows are held in shared memory; the probe that is this kernel less
# the library's floor, log and scales measured faster there on the H200 (sixty-sixth session).
SHARED_ROW_AT: dict[tuple[str, torch.dtype], dict[int, tuple[int, int, bool]]] = {
    ("biased", torch.bfloat16): {262144: (16, 8, False)},
    ("causal", torch.float32): {262144: (16, 8, True)},
}
# On since the sixty-ninth session: on an H100 its GPU tests passed (tests/test_shared_row.py, and test_cluster.py's
# bias and causal ones with it on) and it ran level with the registers (98.6 against 98.5 % of the roofline at biased
# bf16 512×262144, 99.0 against 99.0 at causal fp32; evidence/experiments/2026-12-07-session69/out-h100). The H200's
# gain is session 66's probe's (93.3 against 84.4, 95.7 against 92.1); this kernel's own H200 run is still to come.
SHARED_ROWS = True
# A bias whose rows rows of x share (a [B, 1, 1, S] bias: biased rows/64) held in shared memory as a full one is, its
# row copied from L2 by all but the first row of its group. Off: measured slower than the registers on an H100
# (seventy-seventh session, session75/next.sh shared-bias-rows, % of a copy of the floor's bytes, off → on): bf16
# 512×262144 78.0 → 75.5, 1024×131072 (the 262144 entry's 16 × 8) 87.3 → 74.4, fp32 512×262144 (SHARED_BIAS_ROW_AT,
# its bias read from L2 at each pass) 84.8 → 65.8; the log alike but bf16 262144 (78.7 → 80.6). A full bias held
# here ran at 98.6 on the same card (sixty-ninth session): the shared row's bytes are fewer, its time more.
SHARED_BIAS_ROWS = False
# Such a bias's entries where SHARED_ROW_AT has none: fp32 x alone fills a 16-CTA cluster's shared memory at 262144
# (64 KB a CTA, three an SM), so its bias is read from L2 at each pass (bias_held), ONLINE for two passes, not three.
# In registers it runs at 84.8 % on an H100 (BIASED's 16 × 8; 186 registers in 16 × 4 leave two CTAs an SM).
SHARED_BIAS_ROW_AT: dict[tuple[str, torch.dtype], dict[int, tuple[int, int, bool]]] = {
    ("biased", torch.float32): {262144: (16, 8, True)},
}

if gluon is not None and async_copy is not None:  # (a Triton without them does not run the cluster: why_not_here)
    from triton.experimental.gluon import language as gl

    from .cluster import (_biased, _fast_log, exchange, exchange_barrier, last_kept_column, one_a_cta,
                          receive_buffer, row_layout, split_over_ctas)

    LOG2E = gl.constexpr(1.4426950408889634)

    @gluon.jit
    def _z(xs, bs, b_row, i, scale, lanes, last, X: gl.constexpr, CHUNK: gl.constexpr, HAS_SCALE: gl.constexpr,
           CAUSAL: gl.constexpr, HAS_BIAS: gl.constexpr, BIAS_MIN: gl.constexpr, BIAS_BLEND: gl.constexpr,
           BIAS_HELD: gl.constexpr):
        """Chunk i of the CTA's share as the softmax takes it, in fp32: x · scale (+ bias, -inf where the bias is at
        or below its dtype's minimum; BIAS_HELD: the bias's chunk from shared memory, else from its row b_row in
        global memory), -inf past a causal row's last kept column."""
        z = xs.index(i).load(X).to(gl.float32)
        if HAS_SCALE:
            z = z * scale
        if HAS_BIAS:
            if BIAS_HELD:
                b = bs.index(i).load(X)
            else:
                b = gl.load(b_row + i * CHUNK + lanes)
            z = _biased(z, b, BIAS_MIN, BIAS_BLEND)
        if CAUSAL:
            z = gl.where(i * CHUNK + lanes <= last, z, -float("inf"))
        return z

    @gluon.jit
    def shared_row_kernel(x_ptr, y_ptr, N, stride_x, stride_y, scale, mask_ptr, mask_stride, causal_m, n_chunks,
                          NCHUNK: gl.constexpr, CHUNK: gl.constexpr, VEC: gl.constexpr, HAS_SCALE: gl.constexpr,
                          HAS_MASK: gl.constexpr, CAUSAL: gl.constexpr, LOG: gl.constexpr, bias_ptr=None,
                          bias_stride=0, HAS_BIAS: gl.constexpr = False, BIAS_MIN: gl.constexpr = 0.0,
                          BIAS_BLEND: gl.constexpr = False, ONLINE: gl.constexpr = False, bias_group=1,
                          bias_period=0, BIAS_SHARED: gl.constexpr = False, BIAS_HELD: gl.constexpr = True):
        """One row a cluster, N = C · NCHUNK · CHUNK, CTA c holding columns [c, c + 1) · NCHUNK · CHUNK in shared
        memory as [NCHUNK, CHUNK] (n_chunks = NCHUNK, passed at run time so that the later passes stay rolled). The
        fusion's arguments are masking.fusion_args', as cluster_kernel's; a keep-mask is not taken (shared_row_entry:
        mask_ptr, mask_stride and HAS_MASK are not read). BIAS_SHARED: rows of x share the bias's rows, row r
        reading row (r // bias_group) % bias_period of it, as cluster_kernel's row_of finds it. BIAS_HELD: the bias
        copied into shared memory beside x, else read from global memory (from L2, for shared rows) at each pass."""
        C: gl.constexpr = gl.num_ctas()
        X: gl.constexpr = row_layout(C, gl.num_warps(), VEC)
        chunks: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 0))
        xs = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
        bs = xs  # unused without a bias held beside x
        if HAS_BIAS and BIAS_HELD:
            bs = gl.allocate_shared_memory(bias_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
        max_in = receive_buffer()
        sum_in = receive_buffer()
        bar = exchange_barrier()

        row = gl.program_id(0).to(gl.int64)
        c = gl.arange(0, C, gl.SliceLayout(1, X))
        j = gl.arange(0, CHUNK, gl.SliceLayout(0, X))
        lanes = c[:, None] * (NCHUNK * CHUNK) + j[None, :]
        last = N  # the row's last kept column (CAUSAL)
        if CAUSAL:
            last = last_kept_column(row, causal_m, N)
        x_row = x_ptr + row * stride_x
        b_row = x_row  # unused without a bias
        if HAS_BIAS:
            bias_ptr, bias_stride = mask_rows(bias_ptr, bias_stride, row, bias_group, bias_period, BIAS_SHARED)
            b_row = bias_ptr + row * bias_stride
        for i in gl.static_range(NCHUNK):  # every copy asked for at once, a group a chunk
            if CAUSAL:  # a vector is copied if its first column is kept: nothing past the diagonal's vector is read
                async_copy.async_load(xs.index(i), x_row + i * CHUNK + lanes,
                                      mask=(i * CHUNK + lanes) // VEC * VEC <= last, eviction_policy="evict_last")
            else:
                async_copy.async_load(xs.index(i), x_row + i * CHUNK + lanes, eviction_policy="evict_last")
            if HAS_BIAS and BIAS_HELD:
                async_copy.async_load(bs.index(i), b_row + i * CHUNK + lanes)
            async_copy.commit_group()

        m = gl.full(lanes.shape, -float("inf"), gl.float32, X)
        t = gl.zeros(lanes.shape, gl.float32, X)
        for i in gl.static_range(NCHUNK):  # each chunk once its own copies have landed
            async_copy.wait_group(NCHUNK - 1 - i)
            z = _z(xs, bs, b_row, i, scale, lanes, last, X, CHUNK, HAS_SCALE, CAUSAL, HAS_BIAS, BIAS_MIN,
                   BIAS_BLEND, BIAS_HELD)
            if ONLINE:  # each lane's sum against its own max so far (a lane with nothing kept: 0)
                grown = gl.maximum(m, z)
                lane_shift = gl.where(grown == -float("inf"), 0.0, grown)
                t = t * gl.exp2((m - lane_shift) * LOG2E) + gl.exp2((z - lane_shift) * LOG2E)
                m = grown
            else:
                m = gl.maximum(m, z)
        lane_max = m
        m = gl.max(lane_max, axis=1)
        shift = gl.where(m == -float("inf"), 0.0, m)[:, None]  # a CTA with nothing kept: sum 0, not NaN
        if ONLINE:
            t = t * gl.exp2((lane_max - shift) * LOG2E)
        else:
            for i in range(n_chunks):
                z = _z(xs, bs, b_row, i, scale, lanes, last, X, CHUNK, HAS_SCALE, CAUSAL, HAS_BIAS, BIAS_MIN,
                       BIAS_BLEND, BIAS_HELD)
                t += gl.exp2((z - shift) * LOG2E)

        maxes, sums = exchange(m, gl.sum(t, axis=1), max_in, sum_in, bar)
        row_max = gl.max(maxes, axis=0)
        row_shift = gl.where(row_max == -float("inf"), 0.0, row_max)  # an all -inf row: zeros (-inf), not NaN
        row_sum = gl.sum(sums * gl.exp2((maxes - row_shift[None, :]) * LOG2E), axis=0)
        row_sum = gl.where(row_sum == 0.0, 1.0, row_sum)
        shift_x = gl.convert_layout(one_a_cta(row_shift), gl.SliceLayout(1, X))[:, None]
        if LOG:
            g_x = gl.convert_layout(one_a_cta(_fast_log(row_sum)), gl.SliceLayout(1, X))[:, None]
        else:
            g_x = gl.convert_layout(1.0 / one_a_cta(row_sum), gl.SliceLayout(1, X))[:, None]
        y_row = y_ptr + row * stride_y
        for i in range(n_chunks):
            z = _z(xs, bs, b_row, i, scale, lanes, last, X, CHUNK, HAS_SCALE, CAUSAL, HAS_BIAS, BIAS_MIN,
                   BIAS_BLEND, BIAS_HELD)
            if LOG:
                y = z - shift_x - g_x
            else:
                y = gl.exp2((z - shift_x) * LOG2E) * g_x
            gl.store(y_row + i * CHUNK + lanes, y.to(y_ptr.dtype.element_ty))


def shared_row_entry(x: torch.Tensor, fusion: Fusion) -> tuple[int, int, bool] | None:
    """SHARED_ROW_AT's (CTAs, warps, ONLINE) for x's rows and the fusion (entry_for's), or None where they are held
    in registers: also where x's rows or the bias's are off the 16-byte grid or not of unit column stride."""
    M, N = x.shape
    entry = entry_for(N, x.dtype, fusion)
    if entry is None or x.stride(1) != 1 or not on_grid(x, False, N, x.dtype):
        return None
    bias = fusion.bias
    if bias is not None and (bias.stride(1) != 1 or not on_grid(bias, fusion.bias_shared, N, x.dtype)):
        return None
    return entry


def entry_for(N: int, dtype: torch.dtype, fusion: Fusion) -> tuple[int, int, bool] | None:
    """SHARED_ROW_AT's entry for rows of N elements of `dtype` and the fusion's form (shared bias rows:
    SHARED_BIAS_ROW_AT's first), or None: SHARED_ROWS off, the form and width not listed, a keep-mask, shared bias
    rows (but with SHARED_BIAS_ROWS) or a bias of another dtype than x's, or a width the cluster's chunks do not
    divide."""
    if not SHARED_ROWS:
        return None
    entry = listed_entry(N, dtype, form_of(fusion), fusion.bias_shared)
    if entry is None or fusion.mask is not None or N % (entry[0] * 32 * entry[1] * vector_elems(dtype)):
        return None
    if fusion.bias is not None and (fusion.bias_shared and not SHARED_BIAS_ROWS or fusion.bias.dtype != dtype):
        return None
    return entry


def listed_entry(N: int, dtype: torch.dtype, form: str, bias_shared: bool) -> tuple[int, int, bool] | None:
    """The entry the tables list for rows of N elements of `dtype` in `form`, switches aside: rows sharing bias rows
    SHARED_BIAS_ROW_AT's where it has one, else SHARED_ROW_AT's; None where neither lists it."""
    key = (form, dtype)
    return bias_shared and SHARED_BIAS_ROW_AT.get(key, {}).get(N) or SHARED_ROW_AT.get(key, {}).get(N)


def bias_held(dtype: torch.dtype) -> bool:
    """Whether a bias is copied into shared memory beside x (BIAS_HELD): under 16-bit x, where both fit three CTAs
    an SM; under fp32 x it is read from global memory at each pass (SHARED_BIAS_ROW_AT's shared rows, from L2)."""
    return dtype.itemsize == 2


def launch(x: torch.Tensor, y: torch.Tensor, fusion: Fusion, entry: tuple[int, int, bool]) -> Launch:
    """x's rows into y (a contiguous tensor of x's shape) through shared_row_kernel in shared_row_entry's cluster."""
    M, N = x.shape
    ctas, warps, online = entry
    chunk = 32 * warps * vector_elems(x.dtype)
    n_chunks = N // (ctas * chunk)
    compiled = launch_kernel(shared_row_kernel, (M,), x, y, N, x.stride(0), y.stride(0), **fusion_args(fusion, x),
                             n_chunks=n_chunks, NCHUNK=n_chunks, CHUNK=chunk, VEC=vector_elems(x.dtype),
                             ONLINE=online, BIAS_BLEND=cluster.bias_blends(fusion, x.dtype),
                             BIAS_HELD=fusion.bias is None or bias_held(x.dtype), num_ctas=ctas, num_warps=warps)
    settings = {"ctas": ctas, "num_warps": warps, "step": N // ctas, "held": "shared"}
    return Launch(settings | ({"online": True} if online else {}), [compiled])
