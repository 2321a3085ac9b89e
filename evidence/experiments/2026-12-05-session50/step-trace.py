"""Issue 29, item 3: what one compiled training step runs, softmax_bench's ops against torch's (step-host.py's
model: softmax with a scale and a keep-mask, then log_softmax of it times 4, fullgraph; 64x4000 bf16; a step is
forward, then backward of dy). One warmed step of each is traced with call-trace.py's sys.setprofile: the kernel
launches (Inductor's `launcher` through Triton's launcher, or its static launcher), the compiled graphs' `call`s,
the Python calls in all, and each generated graph's launches as its source writes them.

    PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session50/step-trace.py OUT_DIR
"""

import importlib.util
import re
import sys
from collections import Counter
from pathlib import Path

import torch
from torch._inductor.codecache import PyCodeCache

import softmax_bench

here = Path(__file__).parent
spec = importlib.util.spec_from_file_location("call_trace", here / "call-trace.py")
call_trace = importlib.util.module_from_spec(spec)
spec.loader.exec_module(call_trace)


def ours(x, keep):
    return softmax_bench.log_softmax(softmax_bench.softmax(x, scale=0.125, mask=keep) * 4.0, dim=-1)


def torchs(x, keep):
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(64, 4000, device=device, dtype=torch.bfloat16 if device == "cuda" else torch.float32,
                    requires_grad=True)
    keep = torch.rand(4000, device=device) > 0.2
    dy = torch.randn_like(x)
    print(f"torch {torch.__version__}, {device}")
    for name, fn in (("torch", torchs), ("softmax_bench", ours)):
        torch._dynamo.reset()
        before = len(PyCodeCache.modules)
        compiled = torch.compile(fn, fullgraph=True)

        def step(compiled=compiled):
            x.grad = None
            compiled(x, keep).backward(dy)

        for _ in range(20):
            step()
        if device == "cuda":
            torch.cuda.synchronize()
        events = call_trace.trace(step)
        (out / f"step-trace-{name}.txt").write_text("".join(f"{'  ' * d}{k} {w}\n" for d, k, w in events))
        calls = Counter(w for _, k, w in events if k == "py")
        graphs = sum(n for w, n in calls.items() if w.endswith(":call") and "torchinductor" not in w
                     and len(w.split(":")[0]) > 40)
        launches = {w: n for w, n in calls.items() if w in ("<string>:launcher", "static_triton_launcher.py:run")}
        print(f"{name}: {sum(calls.values())} Python calls, {len(events) - sum(calls.values())} C calls, "
              f"{graphs} graph calls, launches {launches}")
        c_calls = Counter(w for _, k, w in events if k == "c")
        print(f"  Inductor kernel runs {calls['triton_heuristics.py:run']}, allocations "
              f"{c_calls['_empty_strided_cuda'] + c_calls['_empty_strided_cpu']}")
        for module in PyCodeCache.modules[before:]:
            for line in open(module.__file__):
                if re.match(r"\s*(\w+ = )?(\w+\.run\(|torch\.ops\.\w+\.\w+\.default\(|extern_kernels\.\w+\()", line):
                    print(f"  {Path(module.__file__).name[:8]}: {line.strip()[:160]}")


if __name__ == "__main__":
    main()
