"""Compile-only probe (sixty-fourth session, CPU): a biased bf16 row's slice of 16384 elements, one CTA's share of a
262144 row in 16 CTAs, held in shared memory (x and the bias copied in by cp.async, every copy issued before one
wait), then read back a chunk at a time in *rolled* loops (a trip count the compiler does not know) for the max, the
sum and the store. No cluster exchange: the question is only what ptxas keeps live when a pass cannot be unrolled.
`held` is its control: the same slice loaded into registers (x · scale + bias held in fp32), as the cluster kernel's
biased row holds it today, also without an exchange.

    python3 smem-row-probe.py [WARPS ...]   (CPU or GPU, no TRITON_INTERPRET): registers, spills, shared memory and
        SASS counts of both kernels a CTA of 4, 8 and 16 warps, compiled for sm_90
    python3 smem-row-probe.py time [MxN]    (GPU; default 512x262144): each kernel on slices of 16384 (one CTA each,
        so M·N / 16384 CTAs), checked against torch's softmax of each slice, and timed beside a copy and torch.add of
        the three tensors, % of the roofline as biased-floor.py takes it"""
import json, re, subprocess, sys, os

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.language.nvidia.ampere import async_copy
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from tests.compile_sm90 import PTXAS, sass_instructions, opcode

LOG2E = gl.constexpr(1.4426950408889634)


@gluon.jit
def probe(x_ptr, b_ptr, y_ptr, scale, n_chunks, NCHUNK: gl.constexpr, CHUNK: gl.constexpr, VEC: gl.constexpr):
    W: gl.constexpr = gl.num_warps()
    row = gl.program_id(0).to(gl.int64)
    L2: gl.constexpr = gl.BlockedLayout([1, VEC], [1, 32], [1, W], [1, 0])
    L1: gl.constexpr = gl.BlockedLayout([VEC], [32], [W], [0])
    sl: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[0])
    xs = gl.allocate_shared_memory(gl.bfloat16, [NCHUNK, CHUNK], sl)
    bs = gl.allocate_shared_memory(gl.bfloat16, [NCHUNK, CHUNK], sl)
    c1 = gl.arange(0, CHUNK, layout=L1)
    for i in gl.static_range(NCHUNK):
        async_copy.async_load(xs.index(i), x_ptr + row * (NCHUNK * CHUNK) + i * CHUNK + c1, eviction_policy="evict_last")
        async_copy.async_load(bs.index(i), b_ptr + row * (NCHUNK * CHUNK) + i * CHUNK + c1)
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


def constexprs_of(kernel, warps, span=16384, vec=8):
    chunk = vec * 32 * warps
    return {"NCHUNK": span // chunk, "CHUNK": chunk, "VEC": vec} if kernel is probe else {"SLICE": span, "VEC": vec}


def compile_one(kernel, warps, out="/tmp"):
    constexprs = constexprs_of(kernel, warps)
    sig = {"x_ptr": "*bf16", "b_ptr": "*bf16", "y_ptr": "*bf16", "scale": "fp32",
           **({"n_chunks": "i32"} if kernel is probe else {}), **{k: "constexpr" for k in constexprs}}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(3)}
    src = GluonASTSource(fn=kernel, signature=sig, constexprs=constexprs, attrs=attrs)
    k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
    path = f"{out}/{kernel.__name__}{warps}.ptx"
    open(path, "w").write(k.asm["ptx"])
    rep = subprocess.run([PTXAS, "-v", "--gpu-name", "sm_90a", path, "-o", path + ".cubin"], capture_output=True,
                         text=True).stderr
    regs = re.search(r"Used (\d+) registers", rep).group(1)
    spill = sum(int(b) for b in re.findall(r"(\d+) bytes spill", rep))
    sass = subprocess.run([os.path.join(os.path.dirname(PTXAS), "cuobjdump"), "-sass", path + ".cubin"],
                          capture_output=True, text=True).stdout
    ops = [opcode(i) for i in sass_instructions(sass)]
    print(json.dumps({"kernel": kernel.__name__, "warps": warps, "registers": int(regs), "spill": spill, "shared": k.metadata.shared,
                      "sass": len(ops), "LDGSTS": sum(o.startswith("LDGSTS") for o in ops),
                      "LDS": sum(o.startswith("LDS") for o in ops), "STG": sum(o.startswith("STG") for o in ops),
                      "BRA": sum(o.startswith("BRA") for o in ops)}))


def time_slices(shape: str) -> None:
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
    for warps in (4, 8, 16):
        forms[f"shared, rolled, {warps} warps"] = (
            lambda w=warps: probe[(slices,)](x, bias, y, 0.125, 16384 // (8 * 32 * w), num_warps=w,
                                             **constexprs_of(probe, w)), expected)
        forms[f"held, {warps} warps"] = (
            lambda w=warps: held[(slices,)](x, bias, y, 0.125, num_warps=w, **constexprs_of(held, w)), expected)
    for label, (call, want) in forms.items():
        y.zero_()
        call()
        err = (y.float() - want.float()).abs().max().item()
        figures = sorted(measure(call, settings, interpret=False).ms for _ in range(3))
        expected_ms = 3 * x.nbytes / gbps / 1e6
        print(f"  {label:>24}: {figures[1] * 1e3:8.1f} us (of 3: {figures[0] * 1e3:.1f}-{figures[2] * 1e3:.1f}), "
              f"{100 * expected_ms / figures[1]:5.1f} % of the roofline, max err {err:.2g}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["time"]:
        time_slices(sys.argv[2] if len(sys.argv) > 2 else "512x262144")
    else:
        for w in map(int, sys.argv[1:] or ["4", "8", "16"]):
            for kernel in (probe, held):
                compile_one(kernel, w)
