"""A probe (sixty-fourth session; compiled on the CPU, not yet run on a GPU). `probe`: a biased bf16 row's slice of
16384 elements, one CTA's share of a 262144 row in 16 CTAs, held in shared memory (x and the bias copied in by
cp.async, every copy issued before one wait), then read back a chunk at a time in *rolled* loops (a trip count the
compiler does not know) for the max, the sum and the store, with no cluster exchange: what does ptxas keep live when
a pass cannot be unrolled? `held` is its control: the same slice loaded into registers (x · scale + bias held in
fp32), as the cluster kernel's biased row holds it today, also without an exchange. `shared_cluster` is the whole
row: probe's slices as the 16 CTAs of a cluster, with cluster_kernel's exchange (cluster.exchange) between the sum
and the store.

    python3 smem-row-probe.py [WARPS ...]   (CPU or GPU, no TRITON_INTERPRET): registers, spills, shared memory and
        SASS counts of the kernels a CTA of 4, 8 and 16 warps (shared_cluster in 16 CTAs, in its two forms: biased
        bf16, and causal fp32 with nothing past the diagonal read), compiled for sm_90
    python3 smem-row-probe.py time [MxN [WARPS ...]]   (GPU; default 512x262144, warps 4 8 16): probe and held on
        slices of 16384 (one CTA each, so M·N / 16384 CTAs), checked against torch's softmax of each slice; at
        N = 262144 also shared_cluster and the library's softmax (auto: the cluster kernel) on whole rows, biased
        bf16 and causal fp32 (scale 0.125, the M rows as queries), checked against torch's softmax of each row; each
        timed, % of the roofline: the bytes it moves (the causal rows' kept columns read, y written) at the
        bandwidth of a copy timed first, as biased-floor.py takes it"""
import json, subprocess, sys, os

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, opcode, registers_of, sass_instructions
from softmax_bench.kernels.cluster import (exchange, exchange_barrier, one_a_cta, receive_buffer, row_layout,
                                           split_over_ctas)

LOG2E = gl.constexpr(1.4426950408889634)


@gluon.jit
def probe(x_ptr, b_ptr, y_ptr, scale, n_chunks, NCHUNK: gl.constexpr, CHUNK: gl.constexpr, VEC: gl.constexpr):
    W: gl.constexpr = gl.num_warps()
    row = gl.program_id(0).to(gl.int64)
    L1: gl.constexpr = gl.BlockedLayout([VEC], [32], [W], [0])
    sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    xs = gl.allocate_shared_memory(gl.bfloat16, [NCHUNK, CHUNK], sl)
    bs = gl.allocate_shared_memory(gl.bfloat16, [NCHUNK, CHUNK], sl)
    c1 = gl.arange(0, CHUNK, layout=L1)
    for i in gl.static_range(NCHUNK):
        start = row * (NCHUNK * CHUNK) + i * CHUNK
        async_copy.async_load(xs.index(i), x_ptr + start + c1, eviction_policy="evict_last")
        async_copy.async_load(bs.index(i), b_ptr + start + c1)
    async_copy.commit_group()
    async_copy.wait_group(0)
    m = gl.full([CHUNK], -float("inf"), gl.float32, L1)
    for i in range(n_chunks):
        z = xs.index(i).load(L1).to(gl.float32) * scale + bs.index(i).load(L1).to(gl.float32)
        m = gl.maximum(m, z)
    mx = gl.max(m, 0) * LOG2E
    s = gl.zeros([CHUNK], gl.float32, L1)
    for i in range(n_chunks):
        z = xs.index(i).load(L1).to(gl.float32) * scale + bs.index(i).load(L1).to(gl.float32)
        s += gl.exp2(z * LOG2E - mx)
    inv = 1.0 / gl.sum(s, 0)
    for i in range(n_chunks):
        z = xs.index(i).load(L1).to(gl.float32) * scale + bs.index(i).load(L1).to(gl.float32)
        y = gl.exp2(z * LOG2E - mx) * inv
        gl.store(y_ptr + row * (NCHUNK * CHUNK) + i * CHUNK + c1, y.to(gl.bfloat16))


@gluon.jit
def held(x_ptr, b_ptr, y_ptr, scale, SLICE: gl.constexpr, VEC: gl.constexpr):
    L: gl.constexpr = gl.BlockedLayout([VEC], [32], [gl.num_warps()], [0])
    offsets = gl.program_id(0).to(gl.int64) * SLICE + gl.arange(0, SLICE, layout=L)
    z = gl.load(x_ptr + offsets, eviction_policy="evict_last").to(gl.float32) * scale + gl.load(
        b_ptr + offsets).to(gl.float32)
    mx = gl.max(z, 0) * LOG2E
    inv = 1.0 / gl.sum(gl.exp2(z * LOG2E - mx), 0)
    gl.store(y_ptr + offsets, (gl.exp2(z * LOG2E - mx) * inv).to(gl.bfloat16))


@gluon.jit
def shared_cluster(x_ptr, b_ptr, y_ptr, N, scale, n_chunks, causal_m, NCHUNK: gl.constexpr, CHUNK: gl.constexpr,
                   VEC: gl.constexpr, HAS_BIAS: gl.constexpr = True, CAUSAL: gl.constexpr = False):
    """A whole row across a cluster, as cluster_kernel's one exchange takes it, each CTA's share held in shared memory
    and read in rolled loops (the max, the sum, the store): softmax(x · scale + bias), or (CAUSAL) softmax(x · scale)
    under a bottom-right causal mask of causal_m queries, nothing past the diagonal read and zeros written there.
    Rows on the 16-byte grid, N = C · NCHUNK · CHUNK; no floor for the dtype's minimum: a probe, not a variant."""
    X: gl.constexpr = row_layout(gl.num_ctas(), gl.num_warps(), VEC)
    xs, bs, max_in, sum_in, bar, row, lanes, last = row_share(x_ptr, b_ptr, N, causal_m, NCHUNK, CHUNK, VEC, HAS_BIAS,
                                                              CAUSAL)
    copy_share(xs, bs, x_ptr, b_ptr, row, N, lanes, last, NCHUNK, CHUNK, VEC, HAS_BIAS, CAUSAL, False)
    async_copy.wait_group(0)
    m = gl.full(lanes.shape, -float("inf"), gl.float32, X)
    for i in range(n_chunks):
        m = gl.maximum(m, _z(xs, bs, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, CHUNK))
    m = gl.max(m, axis=1)
    shift = gl.where(m == -float("inf"), 0.0, m)[:, None] * LOG2E  # a CTA past the diagonal: sum 0, not NaN
    t = gl.zeros(lanes.shape, gl.float32, X)
    for i in range(n_chunks):
        t += gl.exp2(_z(xs, bs, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, CHUNK) * LOG2E - shift)
    store_row(xs, bs, y_ptr, m, gl.sum(t, axis=1), max_in, sum_in, bar, row, N, scale, n_chunks, lanes, last, X,
              HAS_BIAS, CAUSAL, CHUNK)


@gluon.jit
def row_share(x_ptr, b_ptr, N, causal_m, NCHUNK: gl.constexpr, CHUNK: gl.constexpr, VEC: gl.constexpr,
              HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr):
    """shared_cluster's shared memory and indices: x's (and the bias's) [NCHUNK, C, CHUNK] buffers, CTA c holding
    [:, c, :] (the layout is a chunk's, [C, CHUNK], as index() keeps it), then the exchange's receive buffers and
    mbarrier; the row, a chunk's lanes ([C, CHUNK], row_layout) and the row's last kept column (CAUSAL; else N)."""
    C: gl.constexpr = gl.num_ctas()
    X: gl.constexpr = row_layout(C, gl.num_warps(), VEC)
    chunks: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[1, 0], cga_layout=split_over_ctas(C, 2, 0))
    xs = gl.allocate_shared_memory(x_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
    bs = xs  # unused without a bias
    if HAS_BIAS:
        bs = gl.allocate_shared_memory(b_ptr.dtype.element_ty, [NCHUNK, C, CHUNK], chunks)
    max_in = receive_buffer()
    sum_in = receive_buffer()
    bar = exchange_barrier()
    row = gl.program_id(0).to(gl.int64)
    c = gl.arange(0, C, gl.SliceLayout(1, X))
    j = gl.arange(0, CHUNK, gl.SliceLayout(0, X))
    lanes = c[:, None] * (NCHUNK * CHUNK) + j[None, :]
    last = N  # the row's last kept column (CAUSAL)
    if CAUSAL:
        last = (row % causal_m).to(gl.int32) + (N - causal_m)
    return xs, bs, max_in, sum_in, bar, row, lanes, last


@gluon.jit
def copy_share(xs, bs, x_ptr, b_ptr, row, N, lanes, last, NCHUNK: gl.constexpr, CHUNK: gl.constexpr,
               VEC: gl.constexpr, HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr, GROUP_EACH: gl.constexpr):
    """The CTA's share copied in by cp.async, chunk by chunk: one group in all, or (GROUP_EACH) one a chunk."""
    for i in gl.static_range(NCHUNK):
        if CAUSAL:
            # a vector is read if its first column is kept (16-byte copies; at most one vector a row over-read)
            async_copy.async_load(xs.index(i), x_ptr + row * N + i * CHUNK + lanes,
                                  mask=(i * CHUNK + lanes) // VEC * VEC <= last, eviction_policy="evict_last")
        else:
            async_copy.async_load(xs.index(i), x_ptr + row * N + i * CHUNK + lanes, eviction_policy="evict_last")
        if HAS_BIAS:
            async_copy.async_load(bs.index(i), b_ptr + row * N + i * CHUNK + lanes)
        if GROUP_EACH:
            async_copy.commit_group()
    if not GROUP_EACH:
        async_copy.commit_group()


@gluon.jit
def store_row(xs, bs, y_ptr, m, s, max_in, sum_in, bar, row, N, scale, n_chunks, lanes, last, X: gl.constexpr,
              HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr, CHUNK: gl.constexpr):
    """The CTA's max and sum ([C]) exchanged, the row's found, and the share normalized and stored, chunk by chunk."""
    maxes, sums = exchange(m, s, max_in, sum_in, bar)
    row_max = gl.max(maxes, axis=0)
    row_sum = gl.sum(sums * gl.exp2((maxes - row_max[None, :]) * LOG2E), axis=0)
    shift_x = gl.convert_layout(one_a_cta(row_max), gl.SliceLayout(1, X))[:, None] * LOG2E
    g_x = gl.convert_layout(1.0 / one_a_cta(row_sum), gl.SliceLayout(1, X))[:, None]
    for i in range(n_chunks):
        y = gl.exp2(_z(xs, bs, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, CHUNK) * LOG2E - shift_x) * g_x
        gl.store(y_ptr + row * N + i * CHUNK + lanes, y.to(y_ptr.dtype.element_ty))


@gluon.jit
def _z(xs, bs, i, scale, lanes, last, X: gl.constexpr, HAS_BIAS: gl.constexpr, CAUSAL: gl.constexpr,
       CHUNK: gl.constexpr):
    """Chunk i of the CTA's share as the softmax takes it: x · scale (+ bias), -inf past a causal row's diagonal."""
    z = xs.index(i).load(X).to(gl.float32) * scale
    if HAS_BIAS:
        z += bs.index(i).load(X).to(gl.float32)
    if CAUSAL:
        z = gl.where(i * CHUNK + lanes <= last, z, -float("inf"))
    return z


FORMS = {"biased bf16": (torch.bfloat16, {"HAS_BIAS": True, "CAUSAL": False}),
         "causal fp32": (torch.float32, {"HAS_BIAS": False, "CAUSAL": True})}


def constexprs_of(kernel, warps, span=16384, dtype=torch.bfloat16):
    vec = 16 // dtype.itemsize
    chunk = vec * 32 * warps
    return {"SLICE": span, "VEC": vec} if kernel is held else {"NCHUNK": span // chunk, "CHUNK": chunk, "VEC": vec}


def compile_one(kernel, warps, out="/tmp", ctas=16, form="biased bf16"):
    dtype, switches = FORMS[form] if kernel is shared_cluster else (torch.bfloat16, {})
    constexprs = {**constexprs_of(kernel, warps, dtype=dtype), **switches}
    t = {torch.bfloat16: "*bf16", torch.float32: "*fp32"}[dtype]
    sig = {"x_ptr": t, "b_ptr": "*bf16", "y_ptr": t, **({"N": "i32"} if kernel is shared_cluster else {}),
           "scale": "fp32", **({} if kernel is held else {"n_chunks": "i32"}),
           **({"causal_m": "i32"} if kernel is shared_cluster else {}), **{k: "constexpr" for k in constexprs}}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(4 if kernel is shared_cluster else 3)}
    src = GluonASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs)
    options = {"num_warps": warps, **({"num_ctas": ctas} if kernel is shared_cluster else {})}
    path = f"{out}/{kernel.__name__}{warps}.ptx"
    _, rep, spill, shared = compiled_for_sm90(src, options, path)
    sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
    ops = [opcode(i) for i in sass_instructions(sass)]
    print(json.dumps({"kernel": kernel.__name__ + (f" ({form})" if kernel is shared_cluster else ""), "warps": warps,
                      "registers": registers_of(rep, path), "spill": spill, "shared": shared, "sass": len(ops),
                      "LDGSTS": sum(o.startswith("LDGSTS") for o in ops),
                      "LDS": sum(o.startswith("LDS") for o in ops), "STG": sum(o.startswith("STG") for o in ops),
                      "BRA": sum(o.startswith("BRA") for o in ops)}))


def time_slices(shape: str, warps_tried=(4, 8, 16)) -> None:
    import softmax_bench
    from softmax_bench.timing import TimingSettings, measure

    settings = TimingSettings(warmup_ms=10, rep_ms=50)
    M, N = map(int, shape.split("x"))
    x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    bias = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    slices = M * N // 16384
    copy_ms = min(measure(lambda: y.copy_(x), settings, interpret=False).ms for _ in range(3))
    gbps = 2 * x.nbytes / copy_ms / 1e6
    print("Triton", triton.__version__, torch.cuda.get_device_name(), f"{M}x{N} bf16 in {slices} slices of 16384;",
          f"copy_ {copy_ms * 1e3:.1f} us, {gbps:.0f} GB/s", flush=True)
    expected = torch.softmax((x.float() * 0.125 + bias.float()).view(slices, 16384), -1).view(M, N)
    forms = {"torch.add (3 tensors)": (lambda: torch.add(x, bias, out=y), x + bias)}
    for warps in warps_tried:
        forms[f"shared, rolled, {warps} warps"] = (
            lambda w=warps: (probe[(slices,)](x, bias, y, 0.125, 16384 // (8 * 32 * w), num_warps=w,
                                              **constexprs_of(probe, w)), y)[1], expected)
        forms[f"held, {warps} warps"] = (
            lambda w=warps: (held[(slices,)](x, bias, y, 0.125, num_warps=w, **constexprs_of(held, w)), y)[1],
            expected)
    report(forms, y, 3 * x.nbytes / gbps / 1e6, settings)
    if N != 16 * 16384:
        return
    from softmax_bench.kernels.eager import causal_mask

    for form, (dtype, switches) in FORMS.items():  # whole rows across 16-CTA clusters, against the library's
        x = torch.randn(M, N, dtype=dtype, device="cuda")
        y = torch.empty_like(x)
        if switches["HAS_BIAS"]:
            library = {"bias": bias}
            whole = torch.softmax(x.float() * 0.125 + bias.float(), -1)
            moved = 3 * x.nbytes  # x and the bias read, y written
        else:
            library = {"causal": True}
            masked_out = causal_mask(M, N, M, "cuda")
            whole = torch.softmax((x.float() * 0.125).masked_fill(masked_out, -float("inf")), -1)
            moved = ((~masked_out).sum().item() + M * N) * x.element_size()  # the kept columns read, y written
        print(f"{form} {M}x{N}, whole rows:", flush=True)
        forms = {f"softmax_bench {form} (auto)": (lambda: softmax_bench.softmax(x, scale=0.125, **library), whole)}
        def launch(warps):
            constexprs = constexprs_of(shared_cluster, warps, dtype=dtype)
            shared_cluster[(M,)](x, bias, y, N, 0.125, constexprs["NCHUNK"], M, num_warps=warps, num_ctas=16,
                                 **switches, **constexprs)
            return y

        for warps in warps_tried:
            forms[f"shared_cluster, 16 x {warps}"] = (lambda w=warps: launch(w), whole)
        report(forms, y, moved / gbps / 1e6, settings)


def report(forms: dict, y: torch.Tensor, expected_ms: float, settings) -> None:
    """Each form checked (its output against the expected one), then timed: median of 3 measurements, % of the
    roofline (expected_ms over it)."""
    from softmax_bench.timing import measure

    for label, (call, want) in forms.items():
        y.zero_()
        err = (call().float() - want.float()).abs().max().item()
        figures = sorted(measure(call, settings, interpret=False).ms for _ in range(3))
        print(f"  {label:>28}: {figures[1] * 1e3:8.1f} us (of 3: {figures[0] * 1e3:.1f}-{figures[2] * 1e3:.1f}), "
              f"{100 * expected_ms / figures[1]:5.1f} % of the roofline, max err {err:.2g}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["time"]:
        time_slices(sys.argv[2] if len(sys.argv) > 2 else "512x262144",
                    tuple(map(int, sys.argv[3:])) or (4, 8, 16))
    else:
        for w in map(int, sys.argv[1:] or ["4", "8", "16"]):
            for kernel in (probe, held):
                compile_one(kernel, w)
            for form in FORMS:
                compile_one(shared_cluster, w, form=form)
