"""The fused loss's 16-bit gradient for a loss gradient other than 1, against float64: the share of elements that
are not the exact gradient rounded once, and the largest error in ulps of it; beside torch's loss on the 16-bit
logits and on their fp32 upcast (Quack's reference, and transformers'). Through the interpreter: 0.1·randn logits,
uniform targets, reduction="none" with one N(0, 1) loss gradient a row (Quack's test_cross_entropy's data).

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session44/rounded-once.py
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import softmax_bench  # noqa: E402

MANTISSA = {torch.bfloat16: 8, torch.float16: 11}


def ulps(values: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
    """|values − exact| in ulps of the dtype at exact (fp16's subnormals counted at their fixed ulp)."""
    exponent = torch.floor(torch.log2(exact.abs().clamp_min(2.0 ** -14 if values.dtype == torch.float16 else 1e-38)))
    return (values.double() - exact).abs() / torch.exp2(exponent - (MANTISSA[values.dtype] - 1))


for dtype in (torch.bfloat16, torch.float16):
    for M, N in ((77, 192), (77, 1128), (1, 4096)):
        torch.manual_seed(0)
        x = 0.1 * torch.randn(M, N, dtype=dtype)
        target = torch.randint(0, N, (M,))
        dloss = torch.randn(M)
        exact = (torch.softmax(x.double(), -1) - F.one_hot(target, N).double()) * dloss.double()[:, None]
        for name, loss_of in (("torch, 16-bit logits", lambda z: F.cross_entropy(z, target, reduction="none")),
                              ("torch, fp32 upcast", lambda z: F.cross_entropy(z.float(), target, reduction="none")),
                              ("softmax_bench", lambda z: softmax_bench.cross_entropy(z, target, reduction="none"))):
            z = x.clone().requires_grad_()
            loss = loss_of(z)
            (grad,) = torch.autograd.grad(loss, z, dloss.to(loss.dtype))
            grad = grad.to(dtype)
            off = ulps(grad, exact)
            print(f"{str(dtype)[6:]:8s} {M}×{N:<5d} {name:20s} not rounded once: {(off > 0.5).double().mean():6.1%}"
                  f"   largest error {off.max():5.2f} ulp")
