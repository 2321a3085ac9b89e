"""A probe (sixty-fifth session): session 64's shared_cluster made persistent and double-buffered. A cluster of 16
CTAs takes rows r, r + P, r + 2P, ... (P clusters launched); each CTA holds its share of two rows in shared memory,
and the next row's cp.async copies are issued before the current row is read, so they are in flight through its
max, sum, exchange and store. Shared memory holds one CTA an SM (two rows of x and the bias: 128 KB), and those
loads are in flight at every moment, where shared_cluster's three CTAs an SM each stop loading after their own row's
copies. The question it asks on an H200, where the wide biased and causal rows read 84-90 % of their roofline and the
H100 reads 99: is what they lack loads in flight between one row's copies and the next's?
Outcome on the H100 (out-h100/pipelined-time.txt): correct, and 15-20 points under auto at best; an H100 holds
seven 16-CTA clusters of one CTA an SM (112 of 132 SMs). Closed before any H200 run (docs/perf-notes.md, the
sixty-fifth session).

    python3 pipelined-row-probe.py [WARPS ...]   (CPU or GPU): registers, spills, shared memory and SASS counts of
        the three forms (FORMS: biased bf16 and causal fp32 512x262144 in 16-CTA clusters, causal bf16 2048x151936
        in 8-CTA clusters) at 4, 8 and 16 warps a CTA, compiled for sm_90
    python3 pipelined-row-probe.py time [FORM ...]   (GPU; FORM as "causal-bf16", default all three): each form
        (scale 0.125, the rows as queries) checked against torch's softmax of each row, then timed beside the
        library's auto (and at 262144 session 64's shared_cluster 16 x 8): the pipelined kernel at 8 and 16 warps
        at each of the form's cluster counts (clusters past those resident at once start as the first ones finish,
        their rows behind). % of the roofline as session 64's probe takes it.
"""
import importlib.util, json, os, subprocess, sys

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
from triton.experimental.gluon.language.nvidia.hopper import cluster

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("smem_row_probe", f"{HERE}/../2026-12-06-session64/smem-row-probe.py")
s64 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s64)  # puts the repository on sys.path too
from softmax_bench.kernels.cluster import (exchange, exchange_barrier, one_a_cta, receive_buffer, row_layout,
                                           split_over_ctas)
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, opcode, registers_of, sass_instructions

LOG2E = gl.constexpr(1.4426950408889634)
_z = s64._z


@gluon.jit
def _copy_row(xs, bs, x_ptr, b_ptr, row, M, N, causal_m, lanes, NCHUNK: gl.constexpr, STEP: gl.constexpr,
              VEC: gl.constexpr, HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr):
    """Row `row`'s share into xs (and bs), one commit group; nothing read past the row's end or, for a row past M
    (the last cluster's next), at all."""
    last = gl.where(row < M, N - 1, -1)  # the row's last column read
    if CAUSAL:
        last = gl.where(row < M, (row % causal_m).to(gl.int32) + (N - causal_m), -1)
    for i in gl.static_range(NCHUNK):
        # a vector is read if its first column is: 16-byte copies, at most one vector a causal row over-read
        keep = (i * STEP + lanes) // VEC * VEC <= last
        async_copy.async_load(xs.index(i), x_ptr + row * N + i * STEP + lanes, mask=keep,
                              eviction_policy="evict_last")
        if HAS_BIAS:
            async_copy.async_load(bs.index(i), b_ptr + row * N + i * STEP + lanes, mask=keep)
    async_copy.commit_group()


@gluon.jit
def pipelined_cluster(x_ptr, b_ptr, y_ptr, M, N, scale, n_chunks, causal_m, NCHUNK: gl.constexpr,
                      CHUNK: gl.constexpr, VEC: gl.constexpr, HAS_BIAS: gl.constexpr = True,
                      CAUSAL: gl.constexpr = False):
    """shared_cluster's row (session 64) for rows program_id, + P, ... (P = the grid's clusters), two rows' shares
    held at once (buffers 0 and 1, taken in turn: the loop takes two rows): the next row's copies issued before this
    row is read. Chunks are dealt to the CTAs in turn (chunk i of CTA c: columns (i·C + c)·CHUNK and on), so only
    the last chunks can pass the row's end, and the columns past it count as past a causal row's diagonal: a biased
    row must be whole chunks (N a multiple of C·CHUNK), a causal one need not."""
    C: gl.constexpr = gl.num_ctas()
    STEP: gl.constexpr = C * CHUNK
    X: gl.constexpr = row_layout(C, gl.num_warps(), VEC)
    dtype: gl.constexpr = x_ptr.dtype.element_ty
    chunks: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 0))
    xs0 = gl.allocate_shared_memory(dtype, [NCHUNK, C, CHUNK], chunks)
    xs1 = gl.allocate_shared_memory(dtype, [NCHUNK, C, CHUNK], chunks)
    bs0 = xs0  # unused without a bias
    bs1 = xs1
    if HAS_BIAS:
        bs0 = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
        bs1 = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
    max_in = receive_buffer()
    sum_in = receive_buffer()
    bar = exchange_barrier()
    P = gl.num_programs(0)
    c = gl.arange(0, C, gl.SliceLayout(1, X))
    j = gl.arange(0, CHUNK, gl.SliceLayout(0, X))
    lanes = c[:, None] * CHUNK + j[None, :]  # chunk i's columns: i · STEP + lanes
    first = gl.program_id(0).to(gl.int64)
    _copy_row(xs0, bs0, x_ptr, b_ptr, first, M, N, causal_m, lanes, NCHUNK, STEP, VEC, HAS_BIAS, CAUSAL)
    for r in range(first, M, 2 * P):
        _one_row(xs0, bs0, xs1, bs1, x_ptr, b_ptr, y_ptr, r, P, M, N, scale, n_chunks, causal_m, lanes, max_in,
                 sum_in, bar, 0, X, NCHUNK, STEP, VEC, HAS_BIAS, CAUSAL)
        if r + P < M:
            _one_row(xs1, bs1, xs0, bs0, x_ptr, b_ptr, y_ptr, r + P, P, M, N, scale, n_chunks, causal_m, lanes,
                     max_in, sum_in, bar, 1, X, NCHUNK, STEP, VEC, HAS_BIAS, CAUSAL)
    async_copy.wait_group(0)  # the copies past the last row (masked off) retired before the CTA exits


@gluon.jit
def _one_row(xr, br, xn, bn, x_ptr, b_ptr, y_ptr, row, P, M, N, scale, n_chunks, causal_m, lanes, max_in, sum_in,
             bar, phase: gl.constexpr, X: gl.constexpr, NCHUNK: gl.constexpr, STEP: gl.constexpr,
             VEC: gl.constexpr, HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr):
    """Row `row`, held in (xr, br): row + P's copies into (xn, bn) first, then this row's max, sum, exchange (the
    exchange's count modulo 2 is `phase`: rows alternate buffers and phases together) and store."""
    _copy_row(xn, bn, x_ptr, b_ptr, row + P, M, N, causal_m, lanes, NCHUNK, STEP, VEC, HAS_BIAS, CAUSAL)
    async_copy.wait_group(1)  # this row's copies landed; the next row's may still be in flight
    last = N
    if CAUSAL:
        last = (row % causal_m).to(gl.int32) + (N - causal_m)
    C: gl.constexpr = gl.num_ctas()
    m = gl.full([C, STEP // C], -float("inf"), gl.float32, X)
    for i in range(n_chunks):  # _z's CHUNK is the step from a chunk's columns to the next's
        m = gl.maximum(m, _z(xr, br, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, STEP))
    m = gl.max(m, axis=1)
    shift = gl.where(m == -float("inf"), 0.0, m)[:, None] * LOG2E  # a CTA past the diagonal: sum 0, not NaN
    t = gl.zeros([C, STEP // C], gl.float32, X)
    for i in range(n_chunks):
        t += gl.exp2(_z(xr, br, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, STEP) * LOG2E - shift)
    s = gl.sum(t, axis=1)
    maxes, sums = exchange(m, s, max_in, sum_in, bar, phase)
    row_max = gl.max(maxes, axis=0)
    row_sum = gl.sum(sums * gl.exp2((maxes - row_max[None, :]) * LOG2E), axis=0)
    cluster.arrive()  # what this CTA received is read: its peers may push the next row's
    shift_x = gl.convert_layout(one_a_cta(row_max), gl.SliceLayout(1, X))[:, None] * LOG2E
    g_x = gl.convert_layout(1.0 / one_a_cta(row_sum), gl.SliceLayout(1, X))[:, None]
    for i in range(n_chunks):
        y = gl.exp2(_z(xr, br, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, STEP) * LOG2E - shift_x) * g_x
        gl.store(y_ptr + row * N + i * STEP + lanes, y.to(x_ptr.dtype.element_ty), mask=i * STEP + lanes < N)


# form: (dtype, switches, M, N, CTAs a cluster, clusters tried); 16 CTAs hold one CTA an SM, 8 at 151936 two
FORMS = {"biased bf16": (torch.bfloat16, {"HAS_BIAS": True, "CAUSAL": False}, 512, 262144, 16, (6, 7, 8, 16)),
         "causal fp32": (torch.float32, {"HAS_BIAS": False, "CAUSAL": True}, 512, 262144, 16, (6, 7, 8, 16)),
         "causal bf16": (torch.bfloat16, {"HAS_BIAS": False, "CAUSAL": True}, 2048, 151936, 8, (16, 24, 32))}


def constexprs_of(form, warps):
    dtype, switches, M, N, ctas, _ = FORMS[form]
    vec = 16 // dtype.itemsize
    chunk = vec * 32 * warps
    assert switches["CAUSAL"] or N % (ctas * chunk) == 0, "a biased row must be whole chunks"
    return {"NCHUNK": triton.cdiv(N, ctas * chunk), "CHUNK": chunk, "VEC": vec, **switches}


def compile_one(warps, form, out="/tmp"):
    dtype, _, _, _, ctas, _ = FORMS[form]
    constexprs = constexprs_of(form, warps)
    t = {torch.bfloat16: "*bf16", torch.float32: "*fp32"}[dtype]
    sig = {"x_ptr": t, "b_ptr": "*bf16", "y_ptr": t, "M": "i32", "N": "i32", "scale": "fp32", "n_chunks": "i32",
           "causal_m": "i32", **{k: "constexpr" for k in constexprs}}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 4)}
    src = GluonASTSource(fn=pipelined_cluster, signature=sig, constexprs=constexprs, attrs=attrs)
    path = f"{out}/pipelined{warps}-{form.replace(' ', '-')}.ptx"
    _, rep, spill, shared = compiled_for_sm90(src, {"num_warps": warps, "num_ctas": ctas}, path)
    sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
    ops = [opcode(i) for i in sass_instructions(sass)]
    print(json.dumps({"kernel": f"pipelined_cluster ({form}, {ctas} CTAs)", "warps": warps,
                      "registers": registers_of(rep, path), "spill": spill, "shared": shared, "sass": len(ops),
                      **{op: sum(o.startswith(op) for o in ops) for op in ("LDGSTS", "LDS", "STG", "BRA")}}))


def time_rows(forms=tuple(FORMS)) -> None:
    import softmax_bench
    from softmax_bench.kernels.eager import causal_mask
    from softmax_bench.timing import TimingSettings, measure

    settings = TimingSettings(warmup_ms=10, rep_ms=50)
    x = torch.randn(512, 262144, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    copy_ms = min(measure(lambda: y.copy_(x), settings, interpret=False).ms for _ in range(3))
    gbps = 2 * x.nbytes / copy_ms / 1e6
    print("Triton", triton.__version__, torch.cuda.get_device_name(), f"copy_ of bf16 512x262144 {copy_ms * 1e3:.1f}",
          f"us, {gbps:.0f} GB/s", flush=True)
    for form in forms:
        dtype, switches, M, N, ctas, clusters_tried = FORMS[form]
        x = torch.randn(M, N, dtype=dtype, device="cuda")
        bias = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
        y = torch.empty_like(x)
        if switches["HAS_BIAS"]:
            library = {"bias": bias}
            whole = torch.softmax(x.float() * 0.125 + bias.float(), -1)
            moved = 3 * x.nbytes
        else:
            library = {"causal": True}
            masked_out = causal_mask(M, N, M, "cuda")
            whole = torch.softmax((x.float() * 0.125).masked_fill(masked_out, -float("inf")), -1)
            moved = ((~masked_out).sum().item() + M * N) * x.element_size()
        print(f"{form} {M}x{N}, whole rows:", flush=True)

        def launch(P, warps):
            constexprs = constexprs_of(form, warps)
            pipelined_cluster[(P,)](x, bias, y, M, N, 0.125, constexprs["NCHUNK"], M, num_warps=warps,
                                    num_ctas=ctas, **constexprs)
            return y

        def shared_cluster(warps=8):  # session 64's, at N = 262144 only
            constexprs = s64.constexprs_of(s64.shared_cluster, warps, dtype=dtype)
            s64.shared_cluster[(M,)](x, bias, y, N, 0.125, constexprs["NCHUNK"], M, num_warps=warps, num_ctas=16,
                                     **switches, **constexprs)
            return y

        timed = {f"softmax_bench {form} (auto)": (lambda: softmax_bench.softmax(x, scale=0.125, **library), whole)}
        if N == 262144:
            timed["shared_cluster, 16 x 8"] = (shared_cluster, whole)
        for P in clusters_tried:
            for warps in (8, 16):
                timed[f"pipelined, {P} clusters, {ctas} x {warps}"] = (lambda P=P, w=warps: launch(P, w), whole)
        s64.report(timed, y, moved / gbps / 1e6, settings)


if __name__ == "__main__":
    if sys.argv[1:2] == ["time"]:
        time_rows(tuple(f.replace("-", " ") for f in sys.argv[2:]) or tuple(FORMS))
    else:
        for w in map(int, sys.argv[1:] or ["4", "8", "16"]):
            for form in FORMS:
                compile_one(w, form)
