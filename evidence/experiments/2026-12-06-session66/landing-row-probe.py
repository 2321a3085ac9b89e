"""A probe (sixty-sixth session; compiled on the CPU, not yet run on a GPU): session 64's shared_cluster (a row's
shares held in shared memory across a 16-CTA cluster; on the H200 91.7 % of the roofline at biased bf16 512×262144
in 16 × 8, against the library's 84.3) with its first pass reading each chunk as it lands, not after all of them:
one cp.async group a chunk, the pass waiting for chunk i alone (wait_group(NCHUNK − 1 − i)) before reading it.
`landing_cluster` takes the max so (then the sum and the store in rolled loops, as shared_cluster); with ONLINE, the
max and the sum in that one pass (each lane's sum rescaled as its max grows: one exponential more an element), so
two passes over shared memory, not three.

    python3 landing-row-probe.py [WARPS ...]   (CPU or GPU, no TRITON_INTERPRET): registers, spills, shared memory,
        SASS counts and CTA barriers of both forms (biased bf16, causal fp32) in 16 CTAs, compiled for sm_90
    python3 landing-row-probe.py time [WARPS ...]   (GPU; default 8 16): at 512x262144, biased bf16 and causal fp32
        (scale 0.125), the library's auto, session 64's shared_cluster 16 x 8, and landing_cluster with and without
        ONLINE, each checked against torch and timed (session 64's report: median of 3, % of the roofline)"""
import importlib.util, json, os, subprocess, sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("smem_row_probe", f"{HERE}/../2026-12-06-session64/smem-row-probe.py")
s64 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s64)  # puts the repository on sys.path too
from softmax_bench.kernels.cluster import row_layout
from tests.compile_sm90 import CUOBJDUMP, compiled_for_sm90, opcode, registers_of, sass_instructions

LOG2E = gl.constexpr(1.4426950408889634)
_z = s64._z


@gluon.jit
def landing_cluster(x_ptr, b_ptr, y_ptr, N, scale, n_chunks, causal_m, NCHUNK: gl.constexpr, CHUNK: gl.constexpr,
                    VEC: gl.constexpr, HAS_BIAS: gl.constexpr = True, CAUSAL: gl.constexpr = False,
                    ONLINE: gl.constexpr = False):
    """shared_cluster's row, its first pass reading chunk i once its copies (a group of their own) have landed."""
    X: gl.constexpr = row_layout(gl.num_ctas(), gl.num_warps(), VEC)
    xs, bs, max_in, sum_in, bar, row, lanes, last = s64.row_share(x_ptr, b_ptr, N, causal_m, NCHUNK, CHUNK, VEC,
                                                                  HAS_BIAS, CAUSAL)
    s64.copy_share(xs, bs, x_ptr, b_ptr, row, N, lanes, last, NCHUNK, CHUNK, VEC, HAS_BIAS, CAUSAL, True)
    m = gl.full(lanes.shape, -float("inf"), gl.float32, X)
    t = gl.zeros(lanes.shape, gl.float32, X)
    for i in gl.static_range(NCHUNK):
        async_copy.wait_group(NCHUNK - 1 - i)
        z = _z(xs, bs, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, CHUNK)
        if ONLINE:  # each lane's sum against its own max so far
            grown = gl.maximum(m, z)
            lane_shift = gl.where(grown == -float("inf"), 0.0, grown) * LOG2E
            t = t * gl.exp2(m * LOG2E - lane_shift) + gl.exp2(z * LOG2E - lane_shift)
            m = grown
        else:
            m = gl.maximum(m, z)
    lane_max = m
    m = gl.max(lane_max, axis=1)
    shift = gl.where(m == -float("inf"), 0.0, m)[:, None] * LOG2E  # a CTA past the diagonal: sum 0, not NaN
    if ONLINE:
        t = t * gl.exp2(lane_max * LOG2E - shift)
    else:
        for i in range(n_chunks):
            t += gl.exp2(_z(xs, bs, i, scale, lanes, last, X, HAS_BIAS, CAUSAL, CHUNK) * LOG2E - shift)
    s64.store_row(xs, bs, y_ptr, m, gl.sum(t, axis=1), max_in, sum_in, bar, row, N, scale, n_chunks, lanes, last, X,
                  HAS_BIAS, CAUSAL, CHUNK)


def compile_one(warps, form, online, out="/tmp"):
    dtype, switches = s64.FORMS[form]
    constexprs = {**s64.constexprs_of(s64.shared_cluster, warps, dtype=dtype), **switches, "ONLINE": online}
    t = {torch.bfloat16: "*bf16", torch.float32: "*fp32"}[dtype]
    sig = {"x_ptr": t, "b_ptr": "*bf16", "y_ptr": t, "N": "i32", "scale": "fp32", "n_chunks": "i32",
           "causal_m": "i32", **{k: "constexpr" for k in constexprs}}
    src = GluonASTSource(fn=landing_cluster, signature=sig, constexprs=constexprs,
                         attrs={(i,): [["tt.divisibility", 16]] for i in range(4)})
    path = f"{out}/landing{warps}-{form.replace(' ', '-')}{'-online' if online else ''}.ptx"
    ptx, rep, spill, shared = compiled_for_sm90(src, {"num_warps": warps, "num_ctas": 16}, path)
    sass = subprocess.run([CUOBJDUMP, "-sass", path + ".cubin"], capture_output=True, text=True).stdout
    ops = [opcode(i) for i in sass_instructions(sass)]
    print(json.dumps({"kernel": f"landing_cluster ({form}{', ONLINE' if online else ''})", "warps": warps,
                      "registers": registers_of(rep, path), "spill": spill, "shared": shared, "sass": len(ops),
                      "cta_barriers": ptx.count("bar.sync"), "MUFU.EX2": sum(o.startswith("MUFU.EX2") for o in ops),
                      **{op: sum(o.startswith(op) for o in ops) for op in ("LDGSTS", "LDS", "STG", "BRA")}}))


def time_rows(warps_tried=(8, 16)) -> None:
    import softmax_bench
    from softmax_bench.kernels.eager import causal_mask
    from softmax_bench.timing import TimingSettings, measure

    settings = TimingSettings(warmup_ms=10, rep_ms=50)
    M, N = 512, 262144
    x = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    y = torch.empty_like(x)
    copy_ms = min(measure(lambda: y.copy_(x), settings, interpret=False).ms for _ in range(3))
    gbps = 2 * x.nbytes / copy_ms / 1e6
    print("Triton", __import__("triton").__version__, torch.cuda.get_device_name(),
          f"copy_ of bf16 {M}x{N} {copy_ms * 1e3:.1f} us, {gbps:.0f} GB/s", flush=True)
    bias = torch.randn(M, N, dtype=torch.bfloat16, device="cuda")
    for form, (dtype, switches) in s64.FORMS.items():
        x = torch.randn(M, N, dtype=dtype, device="cuda")
        y = torch.empty_like(x)
        if switches["HAS_BIAS"]:
            library, moved = {"bias": bias}, 3 * x.nbytes
            whole = torch.softmax(x.float() * 0.125 + bias.float(), -1)
        else:
            masked_out = causal_mask(M, N, M, "cuda")
            library, moved = {"causal": True}, ((~masked_out).sum().item() + M * N) * x.element_size()
            whole = torch.softmax((x.float() * 0.125).masked_fill(masked_out, -float("inf")), -1)
        print(f"{form} {M}x{N}, whole rows:", flush=True)

        def launch(kernel, warps, **extra):
            constexprs = s64.constexprs_of(s64.shared_cluster, warps, dtype=dtype)
            kernel[(M,)](x, bias, y, N, 0.125, constexprs["NCHUNK"], M, num_warps=warps, num_ctas=16, **switches,
                         **constexprs, **extra)
            return y

        timed = {f"softmax_bench {form} (auto)": (lambda: softmax_bench.softmax(x, scale=0.125, **library), whole),
                 "shared_cluster, 16 x 8": (lambda: launch(s64.shared_cluster, 8), whole)}
        for warps in warps_tried:
            for online in (False, True):
                timed[f"landing{', online' if online else ''}, 16 x {warps}"] = (
                    lambda w=warps, o=online: launch(landing_cluster, w, ONLINE=o), whole)
        s64.report(timed, y, moved / gbps / 1e6, settings)


if __name__ == "__main__":
    if sys.argv[1:2] == ["time"]:
        time_rows(tuple(map(int, sys.argv[2:])) or (8, 16))
    else:
        for w in map(int, sys.argv[1:] or ["4", "8", "16"]):
            for form in s64.FORMS:
                for online in (False, True):
                    compile_one(w, form, online)
