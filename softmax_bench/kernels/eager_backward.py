"""eager's backward: what torch's autograd runs for eager's code — aten's softmax (or log_softmax) backward, then
the masked_fill's and the scale's backward as torch ops of their own, each another pass over memory. Any dtype
torch takes, float64 included (gradcheck runs through it)."""

from __future__ import annotations

import torch

from . import PLAIN, Backward, Fusion, Launch, Traffic, backward_traffic, elem_size
from .eager import causal_mask_of, fill_masked_out, mask_fill_passes


def launch(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    if fusion.log:
        dx = torch.ops.aten._log_softmax_backward_data(dy, y, -1, y.dtype)
    else:
        dx = torch.ops.aten._softmax_backward_data(dy, y, -1, y.dtype)
    if fusion.causal_m is not None:
        dx = dx.masked_fill(causal_mask_of(y, fusion.causal_m), 0.0)
    if fusion.mask is not None:
        dx = fill_masked_out(dx, fusion, 0.0)
    if fusion.scale != 1.0:
        dx = dx * fusion.scale
    return dx, Launch()


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    nbytes, bool_bytes = M * N * elem_size(dtype), M * N
    passes = list(backward_traffic(M, N, dtype).passes)
    if fusion.causal_m is not None:
        passes.append(("masked_fill with the kept causal mask", nbytes + bool_bytes, nbytes))
    if fusion.mask is not None:
        passes += mask_fill_passes(fusion, bool_bytes, nbytes, "dx")
    if fusion.scale != 1.0:
        passes.append(("scale: read dx, write dx · scale", nbytes, nbytes))
    return Traffic(tuple(passes))


BACKWARD = Backward(
    name="eager",
    summary="aten's softmax backward, then the masks' and the scale's backward as torch ops",
    launch=launch,
    traffic=traffic,
    triton=False,
)
