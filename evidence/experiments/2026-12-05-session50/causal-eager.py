"""The forty-ninth session's causal-mask fix (34571e1) on the GPU: a compiled causal call with variant="eager"
(AOTAutograd traces the eager variant's prologue and backward on fake tensors; under torch 2.11 is_compiling() is
False there), then the same call eagerly, forward and backward, each against torch's masked softmax.

    PYTHONPATH=. python3 evidence/experiments/2026-12-05-session50/causal-eager.py
"""

import torch

import softmax_bench

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"torch {torch.__version__}, {device}")
for dtype in (torch.bfloat16, torch.float32):
    x = torch.randn(256, 256, device=device, dtype=dtype, requires_grad=True)
    dy = torch.randn_like(x)
    future = torch.ones(256, 256, dtype=torch.bool, device=device).triu(1)
    expected = torch.softmax(x.float().masked_fill(future, float("-inf")), -1)
    expected_grad = torch.autograd.grad(expected, x, dy.float())[0].float()
    compiled = torch.compile(lambda t: softmax_bench.softmax(t, causal=True, variant="eager"), dynamic=False)
    for how, fn in (("compiled", compiled), ("eager after compiled", lambda t: softmax_bench.softmax(
            t, causal=True, variant="eager"))):
        y = fn(x)
        grad = torch.autograd.grad(y, x, dy)[0]
        torch.testing.assert_close(y.float(), expected, atol=2e-2 if dtype == torch.bfloat16 else 1e-5, rtol=0)
        torch.testing.assert_close(grad.float(), expected_grad, atol=2e-2 if dtype == torch.bfloat16 else 1e-5,
                                   rtol=0)
        print(f"{dtype} {how}: forward and backward match torch's masked softmax")
