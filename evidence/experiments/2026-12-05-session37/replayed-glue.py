"""The host cost of a replayed call with softmax_bench.launcher's whole replay in C (launcher.Replay and
launcher.replayed, the thirty-seventh session) against the Python replay around Triton's launch and around the
launcher's Launch (the thirty-sixth's), timed on a machine with no GPU: every launch goes to a CUDA driver that
does nothing (the thirty-sixth session's fake_libcuda.c), so what is timed is everything a call does but the
driver's own work.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session37/replayed-glue.py OUT.csv [--rounds 7 --calls 20000]

The launch is fused's for a bf16 64×4000 softmax, set up as the thirty-sixth session's launch-glue.py sets it up
(whose helpers this imports). The stream is asked of `abs` (a C function, as Triton's get_current_stream is:
torch._C._cuda_getCurrentRawStream). Rows, µs a call, the median of the rounds, each round timing every row in turn (a row's
function made before its round):
- plan, triton: replay.Plan (Python) with Triton's C launch;
- plan, own launch from Python: the same Plan's steps, each launched by a Launch from Python (the thirty-sixth
  session's Plan.own_steps, written out here as it ran);
- plan, own (Replay): launcher.Replay, the whole plan in C;
- softmax_bench.softmax(x) as a user calls it, each served by one of these (found by replay.replayed).

replayed-glue-with-c-lookup.csv holds a run of this session's first version, which also looked the plan up in C
(launcher.replayed: the key built as replay.plan_key builds it): its rows "C replayed". That look-up was not kept
(docs/perf-notes.md, thirty-seventh session).
"""

import argparse
import csv
import importlib.util
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.runtime.build import compile_module_from_src

import softmax_bench
from softmax_bench import launcher, replay

SESSION36 = Path(__file__).parents[1] / "2026-12-04-session36" / "launch-glue.py"
spec = importlib.util.spec_from_file_location("launch_glue", SESSION36)
glue = importlib.util.module_from_spec(spec)
spec.loader.exec_module(glue)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()

    where = tempfile.mkdtemp()
    library = glue.fake_driver(where)
    triton_driver = compile_module_from_src((glue.NVIDIA / "driver.c").read_text(), "cuda_utils",
                                            library_dirs=[where], include_dirs=[str(glue.NVIDIA / "include")],
                                            libraries=["cuda"])
    module = launcher.driver_bound(library)

    x = torch.randn(64, 4000, dtype=torch.bfloat16)
    y = torch.empty_like(x)
    kernel, grid, values, kwargs = glue.recorded_launch(x)
    kinds = glue.signature(kernel, values)
    constexprs = {name: value for (name, kind), value in zip(kinds.items(), values) if kind == "constexpr"}
    source = ASTSource(fn=kernel, signature=kinds, constexprs=constexprs)
    real = triton.compile(source, target=GPUTarget("cuda", 90, 32), options={"num_warps": kwargs.get("num_warps", 4)})
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
    own_launch = launcher.make_launch(compiled, grid, template, slots, 0)
    plan_triton = replay.Plan([(replay.launcher(compiled, grid), template, slots)], abs, 0, x.dtype, like_x=True)
    knobs = replay._runtime_knobs()

    def plan_own_from_python(x, mask, bias=None):  # the thirty-sixth session's Plan.__call__ with own_steps
        y = torch.empty_like(x)
        stream = abs(0)
        if replay.hooks_quiet(knobs):
            own_launch(stream, x, y, mask, bias)
        return y

    module.configure(torch.empty_like, torch.contiguous_format, replay._runtime_knobs())
    plan_own = module.Replay((own_launch,), plan_triton, abs, 0, None)
    for variant, plan in (("fused", plan_triton), ("two_pass", plan_own_from_python), ("auto", plan_own)):
        replay.PLANS[replay.plan_key(x, -1, None, None, False, variant)] = plan

    rows = {
        "plan, triton": lambda: partial(plan_triton, x, None),
        "plan, own launch from python": lambda: partial(plan_own_from_python, x, None),
        "plan, own (Replay)": lambda: partial(plan_own, x, None),
        "torch.empty_like(x)": lambda: partial(torch.empty_like, x),
        "softmax_bench.softmax, python replayed, plan triton": lambda: partial(softmax_bench.softmax, x,
                                                                               variant="fused"),
        "softmax_bench.softmax, python replayed, plan own from python": lambda: partial(softmax_bench.softmax, x,
                                                                                         variant="two_pass"),
        "softmax_bench.softmax, python replayed, Replay": lambda: partial(softmax_bench.softmax, x, variant="auto"),
    }
    times = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, make in rows.items():
            call = make()
            for _ in range(200):
                call()
            began = time.perf_counter()
            for _ in range(args.calls):
                call()
            times[name].append((time.perf_counter() - began) / args.calls * 1e6)
    with open(args.out, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["row", "median_us", "min_us", "max_us", "rounds", "calls", "torch", "triton", "python"])
        for name, got in times.items():
            out.writerow([name, f"{statistics.median(got):.3f}", f"{min(got):.3f}", f"{max(got):.3f}", args.rounds,
                          args.calls, torch.__version__, triton.__version__, sys.version.split()[0]])
            print(f"{name:60s} {statistics.median(got):7.3f} µs  ({min(got):.3f}–{max(got):.3f})")


if __name__ == "__main__":
    main()
