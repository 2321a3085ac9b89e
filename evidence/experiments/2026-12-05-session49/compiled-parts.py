"""Issue 29: where compiled_op's host µs a call over torch_compile's go, split into three parts by timing, not by a
profiler (cProfile's own cost is larger than the gap; perf and py-spy are not on the device image):

  whole    the compiled model's call, as host-cost.py times it (dynamo's guards, AOTAutograd's wrappers, the graph)
  graph    Inductor's generated `call` of the same graph on the same input, called directly
  no-launch  that `call` with each Triton kernel's launch (`.run`) replaced by one that does nothing

whole - graph is what dynamo and AOTAutograd add; graph - no-launch the launches; no-launch the graph's own Python
(allocations, views, the stream). softmax, 64x4000 bf16; host-cost.py's timer and its interleaved rounds.

Each peer's make() resets dynamo, so the peer made first recompiles at its first call after the second's make.
`reverse` makes compiled_op first. `three` first makes both peers of scaled-masked and log-softmax too, as
host-bar's `--op softmax --op scaled-masked --op log-softmax` does (one model code object, three cache entries),
and calls each once. `eager` first calls softmax_bench.softmax(x, variant="fused") twice (a replay plan recorded),
as host-cost.py's "replayed launch alone" row does when it is made. `torch` times torch.softmax's row beside them.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session49/compiled-parts.py \\
        [reverse] [three] [eager] [torch]
"""

import importlib.util
import re
import sys
from pathlib import Path

import torch
import softmax_bench
from torch._inductor.codecache import PyCodeCache

from softmax_bench.kernels import PLAIN
from softmax_bench.ops import OPS
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


host_cost = load(Path(__file__).parents[3] / "scripts" / "host-cost.py", "host_cost")


def graph_module(before: int):
    """The one module Inductor generated since PyCodeCache held `before` modules that has a graph's `call`."""
    found = [m for m in PyCodeCache.modules[before:] if callable(getattr(m, "call", None))]
    if len(found) != 1:
        raise SystemExit(f"expected one generated graph module, found {len(found)}")
    return found[0]


def launches_of(module) -> dict:
    """The kernels the graph module launches, by their global names: Triton's CachingAutotuner (Inductor's and user
    kernels alike) and anything else in the module with a `run`."""
    return {k: v for k, v in vars(module).items() if not k.startswith("_") and callable(getattr(v, "run", None))
            and not isinstance(v, type)}


class NoLaunch:
    def run(self, *args, **kwargs):
        pass


def main() -> None:
    rows, cols = 64, 4000
    device = "cuda" if host_cost.ON_GPU else "cpu"
    x = cell_input(rows, cols, torch.bfloat16 if host_cost.ON_GPU else torch.float32, device)
    print(f"torch {torch.__version__}, {device}, {rows}x{cols}, {sys.argv[1:]}")
    names = ["torch_compile", "compiled_op"] if host_cost.ON_GPU else ["torch_compile"]  # (CPU: a dry run)
    if "reverse" in sys.argv:
        names.reverse()
    if "eager" in sys.argv:
        for _ in range(2):
            softmax_bench.softmax(x, variant="fused")
    others = []
    if "three" in sys.argv:
        others = [PEERS[name].make(OPS[op].fusion_for(x)) for op in ("scaled-masked", "log-softmax") for name in names]
    fns = []
    for name in names:
        before = len(PyCodeCache.modules)
        whole = PEERS[name].make(PLAIN)
        want = whole(x)
        module = graph_module(before)
        source = open(module.__file__).read()
        inputs = re.search(r"^\s*(\w+(?:, \w+)*),? = args$", source, re.M)
        if inputs is None or inputs.group(1) != "arg0_1":
            raise SystemExit(f"{name}: its graph takes inputs {inputs and inputs.group(1)}, not x alone")
        got = module.call([x])[0]
        torch.testing.assert_close(got, want, atol=0, rtol=0)
        kernels = launches_of(module)
        print(f"{name}: {module.__file__}; kernels {[type(k).__name__ for k in kernels.values()]}")
        print("".join(line + "\n" for line in source.splitlines() if re.search(r"\.run\(|= empty_strided", line)))

        # the same code run again, its kernels' names bound to a stub (the kernel objects themselves may be the
        # original module's: async_compile hands out one per source, so they are not changed)
        copy = load(Path(module.__file__), f"{name}_no_launch")
        for kernel in launches_of(copy):
            setattr(copy, kernel, NoLaunch())
        for other in others:
            other(x)
        fns += [(name, "whole", lambda whole=whole: whole(x)), (name, "graph", lambda m=module: m.call([x])),
                (name, "no-launch", lambda m=copy: m.call([x]))]
    if "torch" in sys.argv:
        fns.append(("torch.softmax", "eager", lambda: torch.softmax(x, -1)))
    times = host_cost.interleaved([fn for *_, fn in fns], calls=host_cost.LAUNCH_CALLS, warmup=50, rounds=7)
    for (name, part, _), (host, _) in zip(fns, times):
        print(f"{name:14s} {part:10s} {host:8.2f} µs host a call")
    for name, part, fn in fns:  # each row but no-launch still computes the softmax (the stubs reached no other row)
        if part != "no-launch":
            out = fn()
            out = out[0] if isinstance(out, (list, tuple)) else out
            torch.testing.assert_close(out, torch.softmax(x.float(), -1).to(x.dtype), atol=1e-2, rtol=0)
    print("checked: every row but no-launch gives the softmax after its timing")


if __name__ == "__main__":
    main()
