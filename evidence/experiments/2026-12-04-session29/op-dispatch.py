"""Issue 29: what a call of a torch.library.custom_op costs against the same op defined on a Library (define,
impl for CompositeExplicitAutograd, register_fake), each allocating its output and returning it, under no_grad,
on the CPU: the dispatch alone (library.opaque_op's reason).

    python3 evidence/experiments/2026-12-04-session29/op-dispatch.py
"""
import timeit, torch
from typing import Optional
from torch import Tensor

@torch.library.custom_op("bench_disp::via_custom_op", mutates_args=())
def via_custom_op(x: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool, variant: str) -> Tensor:
    return torch.empty_like(x)
@via_custom_op.register_fake
def _(x, dim, scale, mask, causal, variant):
    return torch.empty_like(x)

lib = torch.library.Library("bench_disp", "FRAGMENT")
lib.define("via_library(Tensor x, int dim, float? scale, Tensor? mask, bool causal, str variant) -> Tensor")
def impl(x, dim, scale, mask, causal, variant):
    return torch.empty_like(x)
lib.impl("via_library", impl, "CompositeExplicitAutograd")
torch.library.register_fake("bench_disp::via_library")(lambda x, dim, scale, mask, causal, variant: torch.empty_like(x))

x = torch.randn(64, 4000)
n = 50000
for name, f in [("empty_like alone", lambda: torch.empty_like(x)),
                ("custom_op", lambda: torch.ops.bench_disp.via_custom_op(x, -1, None, None, False, "auto")),
                ("custom_op .default", lambda: torch.ops.bench_disp.via_custom_op.default(x, -1, None, None, False, "auto")),
                ("Library.impl .default", lambda: torch.ops.bench_disp.via_library.default(x, -1, None, None, False, "auto"))]:
    with torch.no_grad():
        t = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
    print(f"{name:24} {t:6.2f} us (no_grad)")
