"""unfused: the seed's four passes (max; subtract and exp; sum; divide) as separate torch ops — the reference
that shows what fusion saves. Subtract and exp are two torch kernels, and the intermediates are fp32 (the
accumulation this project promises), so it moves far more than the one read and one write of `fused`.

Like the Triton variants, a row that is entirely -inf gives zeros (log_softmax: -inf)."""

from __future__ import annotations

import torch

from . import PLAIN, Fusion, Launch, Traffic, Variant, elem_size, output_like
from .eager import prologue, prologue_traffic


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    y = output_like(x, fusion)
    x = prologue(x, fusion)  # a scale, bias and masks as eager runs them
    row_max = x.amax(dim=-1, keepdim=True).float()
    row_max.masked_fill_(row_max == float("-inf"), 0.0)  # all -inf row: shift by 0, not NaN
    shifted = torch.sub(x, row_max)  # fp32, by type promotion
    e = shifted.exp() if fusion.log else shifted.exp_()
    den = e.sum(dim=-1, keepdim=True)
    den.masked_fill_(den == 0.0, 1.0)  # all -inf row: 0 / 1 (or -inf − log 1), not 0 / 0
    if fusion.log:
        torch.sub(shifted, den.log_(), out=y)
    else:
        torch.div(e, den, out=y)
    return y, Launch()


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    n = M * N
    x_bytes, f32_bytes = n * elem_size(dtype), n * 4
    return Traffic(
        prologue_traffic(M, N, dtype, fusion)
        + (
            ("max: read x", x_bytes, 0),
            ("subtract: read x, write fp32 e", x_bytes, f32_bytes),
            ("exp: read e, write e", f32_bytes, f32_bytes),
            ("sum: read e", f32_bytes, 0),
            ("divide (log_softmax: subtract the log): read e, write y", f32_bytes, x_bytes),
        )
    )


VARIANT = Variant(
    name="unfused",
    summary="max, subtract, exp, sum, divide (log_softmax: subtract the log) as five torch kernels, fp32 between",
    launch=launch,
    traffic=traffic,
    triton=False,
)
