"""Issue 29: the in-graph launch's unused pointers. Triton's launcher (driver.c's extractPointer) calls data_ptr()
and then cuPointerGetAttribute for each tensor it is given, and a None pointer costs neither. A plain call's traced
launch gives fused_rows_kernel x for mask_ptr and for bias_ptr (traced_arguments fills a None default with the
first tensor). Three compiled models of softmax_bench.softmax(x) (64x4000 bf16), each traced under one rule, beside
torch_compile, timed with host-cost.py's interleaved rounds:

  x          mask_ptr and bias_ptr given x (the rule at 5c564df)
  bias-none  bias_ptr left None (its default: eager plain calls pass None there already)
  none       mask_ptr None too, where HAS_MASK is off (first run: Triton refused it; the kernels return mask_ptr
             from mask_rows, and a jit function cannot return None)
  library    the library's own rule (no patch): bias_ptr None, mask_ptr 0 where HAS_MASK is off

The FX graph and AOTAutograd caches are off, so each model's graph is traced under its own rule.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session50/unused-pointers.py [x bias-none none library]
"""

import importlib.util
import re
import sys
from pathlib import Path

import torch
import torch._functorch.config
import torch._inductor.config
from torch._inductor.codecache import PyCodeCache

import softmax_bench  # noqa: F401 (the models' eval)
from softmax_bench import kernels
from softmax_bench.kernels import PLAIN
from softmax_bench.peers import PEERS
from softmax_bench.providers import cell_input

spec = importlib.util.spec_from_file_location("host_cost", Path(__file__).parents[3] / "scripts" / "host-cost.py")
host_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host_cost)
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False

FLAGS = {"mask_ptr": "HAS_MASK", "bias_ptr": "HAS_BIAS"}


def traced_arguments(kernel, args, kwargs, rule):
    arguments = {param.name: value for param, value in zip(kernel.params, args)} | kwargs
    first_tensor = next(a for a in args if isinstance(a, torch.Tensor))
    for param in kernel.params:
        if param.name not in arguments:
            arguments[param.name] = None if rule != "x" and param.default is None else (
                first_tensor if param.default is None else param.default)
    if rule == "none":
        for name, flag in FLAGS.items():
            if name in arguments and not arguments.get(flag, False):
                arguments[name] = None
    return arguments


def main() -> None:
    rules = sys.argv[1:] or ["x", "bias-none", "library"]
    x = cell_input(64, 4000, torch.bfloat16, "cuda")
    want = torch.softmax(x.float(), -1).to(x.dtype)
    rows = {"torch_compile": PEERS["torch_compile"].make(PLAIN)}
    original = kernels.traced_arguments
    for rule in rules:
        model = torch.compile(eval("lambda x: softmax_bench.softmax(x, variant='auto')"), dynamic=False)
        if rule != "library":
            kernels.traced_arguments = lambda kernel, args, kwargs, rule=rule: traced_arguments(kernel, args, kwargs,
                                                                                                 rule)
        before = len(PyCodeCache.modules)
        try:
            torch.testing.assert_close(model(x), want, atol=1e-2, rtol=0)
        except Exception as e:  # a rule Triton or Inductor refuses: say so, time the others
            print(f"{rule}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            continue
        finally:
            kernels.traced_arguments = original
        for module in PyCodeCache.modules[before:]:
            launches = [line.strip() for line in open(module.__file__) if re.search(r"\w+\.run\(", line)]
            print(f"{rule}: {launches}")
        rows[f"compiled_op {rule}"] = model
    names = list(rows)
    times = host_cost.interleaved([lambda fn=rows[n]: fn(x) for n in names], calls=host_cost.LAUNCH_CALLS,
                                  warmup=50, rounds=7)
    for name, (host, _) in zip(names, times):
        print(f"{name:24s} {host:8.2f} µs host a call")
    for name in names:
        torch.testing.assert_close(rows[name](x), want, atol=1e-2, rtol=0)
    print("checked: each row gives the softmax after its timing")


if __name__ == "__main__":
    main()
