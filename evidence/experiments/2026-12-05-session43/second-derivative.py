"""A gradient penalty through softmax_bench.softmax against torch.softmax (forty-third session): the gradient of
|∇ₓ (softmax(x)·t)|² + Σx, 4×16 fp32, fused through Triton's interpreter. Before 9727756 the backward's own gradient
came back as a constant under create_graph=True, and the softmax's path dropped out of the second derivative with no
error. Then the same through softmax_bench.cross_entropy against torch's (|∇ₓ loss|² + Σx): differentiable once, it
lost the term the same way until it raised (after 3ea0422). Run at a commit (a worktree of it on PYTHONPATH):

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session43/second-derivative.py
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402

import softmax_bench  # noqa: E402

torch.manual_seed(0)
x, t = torch.randn(4, 16), torch.randn(4, 16)


def penalty_gradient(softmax):
    x_ = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad((softmax(x_) * t).sum(), x_, create_graph=True)
    return torch.autograd.grad((grad * grad).sum() + x_.sum(), x_)[0]


ours, torchs = penalty_gradient(softmax_bench.softmax), penalty_gradient(lambda x: torch.softmax(x, -1))
print(f"largest difference from torch's: {(ours - torchs).abs().max().item():.3g} "
      f"(torch's gradient's largest element {torchs.abs().max().item():.3g})")


target = torch.randint(0, 16, (4,))


def loss_penalty_gradient(loss):
    x_ = x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(loss(x_, target), x_, create_graph=True)
    return torch.autograd.grad((grad * grad).sum() + x_.sum(), x_)[0]


torchs = loss_penalty_gradient(torch.nn.functional.cross_entropy)
try:
    ours = loss_penalty_gradient(softmax_bench.cross_entropy)
    print(f"cross_entropy: largest difference from torch's: {(ours - torchs).abs().max().item():.3g} "
          f"(torch's gradient's largest element {torchs.abs().max().item():.3g})")
except RuntimeError as e:
    print(f"cross_entropy: {str(e)[:80]}…")
