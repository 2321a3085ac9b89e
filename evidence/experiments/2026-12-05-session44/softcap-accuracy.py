"""The fused loss with a softcap c (Gemma 2's c·tanh(x / c)) against float64, beside torch's fp32 loss on the same
code, through the interpreter: 16×3000 fp32 logits of 4·randn, reduction="sum", the loss's and the gradient's
largest error; then the kernel's tanh alone over [-3, 3] and ±[1e-8, 10], in fp32 ulps, against torch.tanh's.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session44/softcap-accuracy.py
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import softmax_bench  # noqa: E402
from softmax_bench.kernels import cross_entropy  # noqa: E402

torch.manual_seed(0)
M, V = 16, 3000
for cap in (3.0, 30.0, 300.0, 1e4):
    x = torch.randn(M, V) * 4
    t = torch.randint(0, V, (M,))

    def capped_loss(z):
        return F.cross_entropy(cap * torch.tanh(z / cap), t, reduction="sum")

    x64, x32, ours = (x.double().requires_grad_(), x.clone().requires_grad_(), x.clone().requires_grad_())
    exact, torchs, our_loss = capped_loss(x64), capped_loss(x32), softmax_bench.cross_entropy(ours, t, softcap=cap,
                                                                                            reduction="sum")
    for loss in (exact, torchs, our_loss):
        loss.backward()
    print(f"c = {cap:g}: loss error ours {abs(our_loss.item() - exact.item()):.2e}, "
          f"torch {abs(torchs.item() - exact.item()):.2e}; "
          f"gradient error ours {(ours.grad.double() - x64.grad).abs().max():.2e}, "
          f"torch {(x32.grad.double() - x64.grad).abs().max():.2e}")


@triton.jit
def tanh_kernel(x_ptr, y_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(y_ptr + i, cross_entropy._tanh(tl.load(x_ptr + i)))


u = torch.cat([torch.linspace(-3, 3, 4096), torch.logspace(-8, 1, 4096), -torch.logspace(-8, 1, 4096)])
y = torch.empty(4096 * 4)
tanh_kernel[(1,)](torch.cat([u, torch.zeros(4096)]), y, 4096 * 4)
exact = torch.tanh(u.double())


def ulps(values):
    return float(((values.double() - exact).abs() / exact.abs() / 2**-23).max())


print(f"tanh: ours {ulps(y[:u.numel()]):.2f} ulp at most, torch.tanh {ulps(torch.tanh(u)):.2f}")
