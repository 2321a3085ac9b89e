"""Issue 29's open question: why torch.compile of softmax(x, scale=0.5, mask=keep) at 64 × 4000 bf16 holds the
opaque op with library.IN_GRAPH on (tests/test_compile.py, in-graph). Prints each traced decision (in_graph's
arguments, the tensor's type, is_fake) and what inductor's code holds, with x needing a gradient and not.

    python3 evidence/experiments/2026-12-02-session19/in-graph-mask.py
"""

import torch
from torch._inductor.utils import run_and_get_code
from torch._subclasses.fake_tensor import is_fake

import softmax_bench
from softmax_bench import library

library.IN_GRAPH = True
decide = library.in_graph


def spied(x, dim, variant, log, backward=False, form="softmax"):
    answer = decide(x, dim, variant, log, backward, form)
    print(f"  in_graph(N={x.shape[dim]}, {variant}, log={log}, backward={backward}, form={form}) -> {answer}; "
          f"{type(x).__name__}, is_fake {is_fake(x)}")
    return answer


library.in_graph = spied
for grad in (False, True):
    for masked in (True, False):
        torch._dynamo.reset()
        x = torch.randn(64, 4000, device="cuda", dtype=torch.bfloat16, requires_grad=grad)
        keep = torch.rand(64, 4000, device="cuda") > 0.1 if masked else None
        print(f"requires_grad={grad} mask={masked}:")
        _, code = run_and_get_code(torch.compile(lambda t, m: softmax_bench.softmax(t, scale=0.5, mask=m),
                                                 fullgraph=True), x, keep)
        code = "\n".join(code)
        print(f"  code: opaque {'softmax_opaque' in code}, fused kernel {'fused_rows_kernel' in code}")
