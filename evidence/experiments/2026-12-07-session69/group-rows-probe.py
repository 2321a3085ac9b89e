"""Does a cluster that holds R rows of one group of a shared bias, and copies its bias piece into shared memory once
for them, run the biased rows/64 cluster widths nearer their roofline? (issue 26, session 67's lead 2.)

The probe is shared_row_kernel (softmax_bench/kernels/shared_row.py), the softmax only, with a row loop: cluster p
takes rows p · R … p · R + R − 1, which share bias row (p · R) // 64. Each CTA copies its piece of that bias row
into shared memory by cp.async once, then for each row copies its piece of x into one buffer (after a CTA barrier,
so that no thread still reads the last row's), takes the max as the chunks land, the sum, one exchange (the row's
count modulo 2 its mbarrier phase; the CTA arrives at the cluster barrier once it has read what it received), and
stores. R = 1 is the same kernel reading the bias a row at a time, the baseline beside auto. key-padded (its
rows/64 keep-mask, uint8) is run the same way, its mask's piece held where the bias's is (MASKED).

    python3 group-rows-probe.py compile         # sm_90 without a GPU: registers, spills, shared memory
    python3 group-rows-probe.py [CELLS]          # on a GPU, biased then key-padded: each cell's auto, then R = 1,
                                                 # 2, 4; median of 3, µs
                                                 # and % of a copy of x (the roofline but the bias's 1/64)
"""
import os
import sys

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import cluster

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
from softmax_bench.kernels.cluster import (exchange, exchange_barrier, one_a_cta, receive_buffer,  # noqa: E402
                                           row_layout, split_over_ctas)
from softmax_bench.kernels.shared_row import _z  # noqa: E402

LOG2E = gl.constexpr(1.4426950408889634)
GROUP = 64  # rows/64: 64 consecutive rows share a bias row
# (M, N, CTAs, warps): the biased rows/64 cluster cells of the default grid whose width is whole chunks
CELLS = [(512, 262144, 16, 8), (1024, 131072, 16, 8), (2048, 65536, 8, 8), (4096, 32768, 4, 8)]


@gluon.jit
def _zz(xs, bs, i, scale, lanes, N, X: gl.constexpr, CHUNK: gl.constexpr, BIAS_MIN: gl.constexpr,
        MASKED: gl.constexpr):
    """Chunk i as the softmax takes it: x · scale + bias (shared_row's _z), or (MASKED: bs holds a keep-mask's bytes)
    x · scale where kept, -inf elsewhere."""
    if MASKED:
        z = xs.index(i).load(X).to(gl.float32) * scale
        return gl.where(bs.index(i).load(X) != 0, z, -float("inf"))
    else:
        return _z(xs, bs, i, scale, lanes, N, X, CHUNK, True, False, True, BIAS_MIN, False)


@gluon.jit
def group_rows_kernel(x_ptr, y_ptr, b_ptr, N, scale, n_chunks, R: gl.constexpr, NCHUNK: gl.constexpr,
                      CHUNK: gl.constexpr, VEC: gl.constexpr, BIAS_MIN: gl.constexpr, MASKED: gl.constexpr = False):
    C: gl.constexpr = gl.num_ctas()
    X: gl.constexpr = row_layout(C, gl.num_warps(), VEC)
    chunks: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 0))
    xs = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
    bs = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
    max_in = receive_buffer()
    sum_in = receive_buffer()
    bar = exchange_barrier()

    first = gl.program_id(0).to(gl.int64) * R
    c = gl.arange(0, C, gl.SliceLayout(1, X))
    j = gl.arange(0, CHUNK, gl.SliceLayout(0, X))
    lanes = c[:, None] * (NCHUNK * CHUNK) + j[None, :]
    b_row = b_ptr + (first // 64) * N  # the group's bias row: copied once, its groups committed first
    for i in gl.static_range(NCHUNK):
        async_copy.async_load(bs.index(i), b_row + i * CHUNK + lanes)
        async_copy.commit_group()
    for r in gl.static_range(R):
        row = first + r
        if r > 0:
            gl.barrier()  # every thread has read xs for the last row's store before the copies overwrite it
        x_row = x_ptr + row * N
        for i in gl.static_range(NCHUNK):
            async_copy.async_load(xs.index(i), x_row + i * CHUNK + lanes, eviction_policy="evict_last")
            async_copy.commit_group()
        m = gl.full(lanes.shape, -float("inf"), gl.float32, X)
        for i in gl.static_range(NCHUNK):  # groups retire in order: the bias's (older) have landed with x's chunk i
            async_copy.wait_group(NCHUNK - 1 - i)
            m = gl.maximum(m, _zz(xs, bs, i, scale, lanes, N, X, CHUNK, BIAS_MIN, MASKED))
        m = gl.max(m, axis=1)
        shift = gl.where(m == -float("inf"), 0.0, m)[:, None]
        t = gl.zeros(lanes.shape, gl.float32, X)
        for i in range(n_chunks):
            z = _zz(xs, bs, i, scale, lanes, N, X, CHUNK, BIAS_MIN, MASKED)
            t += gl.exp2((z - shift) * LOG2E)
        maxes, sums = exchange(m, gl.sum(t, axis=1), max_in, sum_in, bar, r % 2)
        row_max = gl.max(maxes, axis=0)
        row_shift = gl.where(row_max == -float("inf"), 0.0, row_max)
        row_sum = gl.sum(sums * gl.exp2((maxes - row_shift[None, :]) * LOG2E), axis=0)
        row_sum = gl.where(row_sum == 0.0, 1.0, row_sum)
        cluster.arrive()  # what this CTA received is read: its peers may push the next row's
        shift_x = gl.convert_layout(one_a_cta(row_shift), gl.SliceLayout(1, X))[:, None]
        g_x = gl.convert_layout(1.0 / one_a_cta(row_sum), gl.SliceLayout(1, X))[:, None]
        y_row = y_ptr + row * N
        for i in range(n_chunks):
            z = _zz(xs, bs, i, scale, lanes, N, X, CHUNK, BIAS_MIN, MASKED)
            gl.store(y_row + i * CHUNK + lanes, (gl.exp2((z - shift_x) * LOG2E) * g_x).to(y_ptr.dtype.element_ty))


def constexprs_of(N, ctas, warps, R, masked=False):
    chunk = 32 * warps * 8  # bf16: 8 elements a 16-byte vector
    assert N % (ctas * chunk) == 0, "a row must be whole chunks"
    return {"R": R, "NCHUNK": N // (ctas * chunk), "CHUNK": chunk, "VEC": 8,
            "BIAS_MIN": float(torch.finfo(torch.bfloat16).min), "MASKED": masked}


def compile_all(out="/tmp"):
    from tests.compile_sm90 import compiled_for_sm90, registers_of

    for (M, N, ctas, warps), masked in [(cell, masked) for masked in (False, True) for cell in CELLS]:
        for R in (1, 2, 4):
            constexprs = constexprs_of(N, ctas, warps, R, masked)
            sig = {"x_ptr": "*bf16", "y_ptr": "*bf16", "b_ptr": "*u8" if masked else "*bf16", "N": "i32", "scale": "fp32",
                   "n_chunks": "i32", **{k: "constexpr" for k in constexprs}}
            src = GluonASTSource(fn=group_rows_kernel, signature=sig, constexprs=constexprs,
                                 attrs={(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3)})
            path = f"{out}/group-rows-{N}-R{R}{'-masked' if masked else ''}.ptx"
            _, report, spill, shared = compiled_for_sm90(src, {"num_warps": warps, "num_ctas": ctas}, path)
            print(f"{'key-padded' if masked else 'biased'} N {N} ({ctas} CTAs x {warps} warps) R {R}: {registers_of(report, path)} registers, {spill} bytes "
                  f"spilled, {shared} bytes of shared memory", flush=True)


def time_cells(cells):
    from softmax_bench.dispatch import clear_caches
    from softmax_bench.ops import get_op, user_call
    from softmax_bench.timing import TimingSettings, measure

    settings = TimingSettings(warmup_ms=5, rep_ms=25)

    def median_ms(fn):
        return sorted(measure(fn, settings, interpret=False).ms for _ in range(3))[1]

    print("Triton", triton.__version__, torch.cuda.get_device_name(), flush=True)
    for (M, N, ctas, warps), form in [(cell, form) for form in ("biased", "key-padded") for cell in cells]:
        op, masked = get_op(form), form == "key-padded"
        x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
        y = torch.empty_like(x)
        copy_ms = median_ms(lambda: y.copy_(x))
        fusion = op.fusion_for(x, "rows/64") if op.shaped else op.fusion_for(x)
        if masked:  # the key-padding mask's rows (uint8, 1 = kept), 64 rows of x a row
            assert fusion.mask_group == GROUP and fusion.mask_period in (0, M // GROUP), fusion
            bias = fusion.mask
            z = (x.double() * fusion.scale).masked_fill(bias.repeat_interleave(GROUP, 0) == 0, float("-inf"))
        else:
            assert fusion.bias_group == GROUP and fusion.bias_period in (0, M // GROUP), fusion
            bias = fusion.bias
            assert bias.dtype == x.dtype, bias.dtype
            z = x.double() * fusion.scale + bias.double().repeat_interleave(GROUP, 0)
        assert bias.stride() == (N, 1), bias.stride()
        want = torch.softmax(z, -1)
        clear_caches()
        call = user_call(x, fusion, "auto")
        err = (call().double() - want).abs().max().item()
        ms = median_ms(call)
        line = f"{form} rows/64 bf16 {M}x{N}: copy {copy_ms * 1e3:.1f} us | auto {ms * 1e3:.1f} " \
               f"({copy_ms / ms * 100:.1f} %, err {err:.0e}) |"
        for R in (1, 2, 4):
            constexprs = constexprs_of(N, ctas, warps, R, masked)

            def launch():
                group_rows_kernel[(M // R,)](x, y, bias, N, fusion.scale, constexprs["NCHUNK"], num_warps=warps,
                                            num_ctas=ctas, **constexprs)
                return y
            y.zero_()
            err = (launch().double() - want).abs().max().item()
            ms = median_ms(launch)
            line += f" R{R} {ms * 1e3:.1f} ({copy_ms / ms * 100:.1f} %, err {err:.0e}) |"
        print(line, flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["compile"]:
        compile_all()
    else:
        time_cells(CELLS[: int(sys.argv[1])] if sys.argv[1:] else CELLS)
