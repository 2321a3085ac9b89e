"""The host cost of the code around a replayed launch, Triton 3.8's C launch against softmax_bench.launcher's, timed
on a machine with no GPU: both are linked to a CUDA driver that does nothing (fake_libcuda.c, every function
returns success at once), so what is timed is everything a call does but the driver's own work, which is the same
for both.

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session36/launch-glue.py OUT.csv [--rounds 7 --calls 20000]

The launch is fused's for a bf16 64×4000 softmax as softmax_bench records it (its arguments taken from fused.launch,
the kernel compiled for sm_90 for its PTX and signature). Rows (µs a call, median of the rounds, each round timing
every row in turn):
- triton launch: replay.launcher's call of Triton's C launch (its hook check, the 16 arguments, the parameters
  converted from the argument list);
- own launch: launcher.Launch called with the stream and the tensors;
- plan, triton / plan, own: a whole replayed call (Plan.__call__: y allocated, the stream asked, the launch) of
  a CPU tensor, the stream a constant;
- softmax_bench.softmax, plan triton / own: softmax_bench.softmax(x, variant=...) as a user calls it, served by
  that plan (kept as the plan of its call's key).
With --like-x the plans allocate y as make_plan's now do for a contiguous x (torch.empty_like(x), no keywords).
Since the thirty-seventh session replaced Plan.own_steps by launcher.Replay, "plan, own" is own_launch_plan, which
writes that Plan's own path out (its outputs here, launch-glue*.csv, are from the thirty-sixth session's code).
"""

import argparse
import csv
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from functools import partial
from types import SimpleNamespace

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.build import compile_module_from_src

import softmax_bench
from softmax_bench import launcher, replay
from softmax_bench.kernels import fused

HERE = Path(__file__).parent
NVIDIA = Path(triton.__file__).parent / "backends" / "nvidia"


def fake_driver(where: str) -> str:
    """fake_libcuda.c built as libcuda.so.1 (and libcuda.so, to link with) and loaded globally: Triton's driver
    module, linked to it, and its dlopen("libcuda.so.1") find it by its soname."""
    library = os.path.join(where, "libcuda.so.1")
    subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", str(HERE / "fake_libcuda.c"),
                           "-o", library])
    os.symlink(library, os.path.join(where, "libcuda.so"))
    ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
    return library


def recorded_launch(x: torch.Tensor):
    """(kernel, grid, arguments bound in the kernel's order) of fused's launch for x, not launched."""
    got = []
    real = fused.launch_kernel
    fused.launch_kernel = lambda kernel, grid, *args, **kwargs: got.append((kernel, grid, args, kwargs))
    try:
        fused.launch(x)
    finally:
        fused.launch_kernel = real
    kernel, grid, args, kwargs = got[0]
    return kernel, grid, replay.bound_arguments(kernel, args, kwargs), kwargs


def signature(kernel, values: list) -> dict:
    """The signature Triton 3.8 gives a launch with these values (ints equal to 1 and None specialized away)."""
    kinds = {}
    for param, value in zip(kernel.params, values):
        if param.is_constexpr or value is None or (type(value) is int and value == 1):
            kinds[param.name] = "constexpr"
        elif isinstance(value, torch.Tensor):
            kinds[param.name] = "*" + {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
                                       torch.uint8: "u8", torch.bool: "i1"}[value.dtype]
        elif isinstance(value, bool):
            kinds[param.name] = "i1"
        elif isinstance(value, int):
            kinds[param.name] = "i32" if -2**31 <= value < 2**31 else "i64"
        else:
            kinds[param.name] = "fp32"
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--like-x", action="store_true", help="plans that allocate y as torch.empty_like(x) (Plan's "
                        "like_x, from the thirty-sixth session; without it, as before)")
    args = parser.parse_args()

    where = tempfile.mkdtemp()
    library = fake_driver(where)
    own = launcher.driver_bound(library)

    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    compiled, grid, values, template, slots, real = compiled_launch(x, y, where)
    triton_launch = replay.launcher(compiled, grid)
    own_launch = launcher.make_launch(compiled, grid, template, slots, 0)
    triton_args = list(values)
    runtime_kinds = [kind for kind in compiled.src.signature.values() if kind != "constexpr"]
    print(f"fused's launch: {len(values)} arguments, {len(runtime_kinds)} parameters "
          f"({len(launcher.ptx_parameters(real.asm['ptx'], real.metadata.name))} in the PTX); own launcher {own}",
          file=sys.stderr)

    steps = [(triton_launch, template, slots)]
    like_x = {"like_x": True} if args.like_x else {}  # as make_plan makes a plan for a contiguous x now
    plan_triton = replay.Plan(steps, lambda device: 0, 0, x.dtype, **like_x)
    plan_own = own_launch_plan(own_launch, args.like_x, lambda device: 0)
    # kept as the plans of softmax_bench.softmax(x, variant=...) for a CPU x: a user's call, served by them
    replay.PLANS[replay.plan_key(x, -1, None, None, False, "fused")] = plan_triton
    replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto")] = plan_own
    rows = {
        "triton launch": lambda: triton_launch(0, triton_args),
        "own launch": lambda: own_launch(0, x, y, None, None),
        "plan, triton": lambda: plan_triton(x, None),
        "plan, own": lambda: plan_own(x, None),
        "torch.empty_like as the plans call it": (partial(torch.empty_like, x) if args.like_x else partial(
            torch.empty_like, x, dtype=x.dtype, memory_format=torch.contiguous_format)),
        "softmax_bench.softmax, plan triton": partial(softmax_bench.softmax, x, variant="fused"),
        "softmax_bench.softmax, plan own": partial(softmax_bench.softmax, x, variant="auto"),
    }
    time_rows(rows, args.rounds, args.calls, args.out, 36)


def compiled_launch(x: torch.Tensor, y: torch.Tensor, where: str):
    """(compiled, grid, values, template, slots, the real compile) of fused's launch for x into y: compiled for
    sm_90 for its PTX and signature, its run Triton 3.8's C launch built against the driver in `where`
    (fake_driver's); values, the arguments bound; template and slots, as replay keeps them."""
    triton_driver = compile_module_from_src((NVIDIA / "driver.c").read_text(), "cuda_utils", library_dirs=[where],
                                            include_dirs=[str(NVIDIA / "include")], libraries=["cuda"])
    kernel, grid, values, kwargs = recorded_launch(x)
    kinds = signature(kernel, values)
    constexprs = {name: value for (name, kind), value in zip(kinds.items(), values) if kind == "constexpr"}
    source = ASTSource(fn=kernel, signature=kinds, constexprs=constexprs)
    options = {"num_warps": kwargs.get("num_warps", 4)}
    real = triton.compile(source, target=GPUTarget("cuda", 90, 32), options=options)
    runtime_kinds = [kind for kind in kinds.values() if kind != "constexpr"]
    annotations = [triton_driver.PyKernelArg(nested_tuple=None, type=triton_driver.ARG_CONSTEXPR if kind == "constexpr"
                                             else triton_driver.ARG_KERNEL) for kind in kinds.values()]
    run = SimpleNamespace(launch=triton_driver.launch, arg_annotations=annotations,
                          kernel_signature=triton_driver.build_signature_metadata(runtime_kinds),
                          launch_cooperative_grid=False, launch_pdl=False, global_scratch_size=0,
                          profile_scratch_size=0, gsan_enabled=False)
    metadata = SimpleNamespace(name=real.metadata.name, num_warps=real.metadata.num_warps,
                               num_ctas=real.metadata.num_ctas, shared=real.metadata.shared)
    compiled = SimpleNamespace(run=run, function=0x1234, src=source, asm={"ptx": real.asm["ptx"]},
                               metadata=metadata, packed_metadata=(metadata.num_warps, metadata.num_ctas,
                                                                    metadata.shared))
    slots = tuple((position, source) for position, value in enumerate(values) for source, tensor in
                  ((replay.X, x), (replay.Y, y)) if value is tensor)
    template = [None if isinstance(value, torch.Tensor) else value for value in values]
    return compiled, grid, values, template, slots, real


def own_launch_plan(own_launch, like_x: bool, stream_of):
    """A plan as this session's Plan ran its own steps (Plan.own_steps; launcher.Replay since the thirty-seventh
    session): y allocated, the stream asked, the hooks checked, the Launch called from Python."""
    knobs = replay._runtime_knobs()

    def plan(x, mask, bias=None):
        if like_x:
            y = torch.empty_like(x)
        else:
            y = torch.empty_like(x, dtype=x.dtype, memory_format=torch.contiguous_format)
        stream = stream_of(0)
        if replay.hooks_quiet(knobs):
            own_launch(stream, x, y, mask, bias)
        return y

    return plan


def time_rows(rows: dict, rounds: int, calls: int, path: str, width: int) -> None:
    """Each of `rows` (name: call) timed, 200 calls and then `calls` timed, each round every row in turn; the
    median, least and most µs a call of the rounds written to `path` (CSV) and printed, names `width` wide."""
    times = {name: [] for name in rows}
    for _ in range(rounds):
        for name, call in rows.items():
            for _ in range(200):
                call()
            began = time.perf_counter()
            for _ in range(calls):
                call()
            times[name].append((time.perf_counter() - began) / calls * 1e6)
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["row", "median_us", "min_us", "max_us", "rounds", "calls", "torch", "triton", "python"])
        for name, got in times.items():
            out.writerow([name, f"{statistics.median(got):.3f}", f"{min(got):.3f}", f"{max(got):.3f}", rounds,
                          calls, torch.__version__, triton.__version__, sys.version.split()[0]])
            print(f"{name:{width}s} {statistics.median(got):7.3f} µs  ({min(got):.3f}–{max(got):.3f})")

if __name__ == "__main__":
    main()
