"""Issue 29, item 3, on a CPU: (1) the kernels Inductor makes of torch's compiled training step (step-host.py's model,
64x4000 fp32 on a CPU), forward and backward; (2) from the fiftieth session's step-trace.py output on a CPU
(TRITON_INTERPRET=1), the Python and C calls of each step outside our opaque ops' implementations (which run the
interpreter there), against torch's step.

    TRITON_INTERPRET=1 PYTHONPATH=.:scripts python3 evidence/experiments/2026-12-05-session50/step-trace.py /tmp/st
    python3 evidence/experiments/2026-12-05-session51/step-cpu.py /tmp/st
"""

import re
import sys
from collections import Counter

import torch
from torch._inductor.codecache import PyCodeCache


def torchs(x, keep):
    return torch.log_softmax(torch.softmax((x * 0.125).masked_fill(~keep, float("-inf")), -1) * 4.0, -1)


def outside_ours(path):
    """The trace's lines, those nested under our opaque ops' implementations left out."""
    kept, skip = [], None
    for line in open(path):
        depth, what = (len(line) - len(line.lstrip(" "))) // 2, line.strip()
        if skip is not None and depth > skip:
            continue
        skip = None
        kept.append(what)
        if what.startswith("py library.py:") and ("opaque" in what or "<lambda>" in what):
            skip = depth
    return kept


x = torch.randn(64, 4000, requires_grad=True)
keep = torch.rand(4000) > 0.2
before = len(PyCodeCache.modules)
torch.compile(torchs, fullgraph=True)(x, keep).backward(torch.randn_like(x))
for graph, module in zip(("forward", "backward"), PyCodeCache.modules[before:]):
    kernels = re.findall(r"^\s*(cpp_fused\w+)\(", open(module.__file__).read(), re.M)
    print(f"torch's {graph}: {len(kernels)} Inductor kernel(s): {', '.join(k[:60] for k in kernels)}")
ours, theirs = (outside_ours(f"{sys.argv[1]}/step-trace-{name}.txt") for name in ("softmax_bench", "torch"))
print(f"a step's calls outside our ops' implementations: softmax_bench {len(ours)}, torch {len(theirs)}")
mine, other = Counter(ours), Counter(theirs)
for what in sorted(set(mine) | set(other)):
    if mine[what] != other[what] and ".py:call" not in what and "step-trace.py" not in what:
        print(f"  {what[:90]:90} softmax_bench {mine[what]:3}  torch {other[what]:3}")
