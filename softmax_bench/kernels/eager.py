"""eager: torch.softmax, what a user gets without writing a kernel. One read, one write.

Unlike the Triton variants, a row that is entirely -inf gives NaN here (torch's behaviour)."""

from __future__ import annotations

import torch

from . import Launch, Variant, one_pass_traffic


def launch(x: torch.Tensor) -> tuple[torch.Tensor, Launch]:
    return torch.softmax(x, dim=-1), Launch()


VARIANT = Variant(
    name="eager",
    summary="torch.softmax: one fused torch kernel, one read, one write",
    launch=launch,
    traffic=one_pass_traffic,
    triton=False,
    masked_rows_zero=False,
)
