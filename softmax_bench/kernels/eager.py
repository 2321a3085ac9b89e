"""eager: what a user writes in torch: torch.softmax (or log_softmax), after a scale and masked_fill as separate ops
when asked for — each of those is another pass over memory, which the Triton variants absorb.

Unlike the Triton variants, a row that is entirely -inf (fully masked) gives NaN here (torch's behaviour). It also
takes float64, which the Triton variants do not: gradcheck runs through it."""

from __future__ import annotations

from functools import lru_cache

import torch

from . import PLAIN, Fusion, Launch, Traffic, Variant, elem_size, traced


def causal_mask(rows: int, N: int, causal_m: int, device: str) -> torch.Tensor:
    """The masked-out positions (True) of a bottom-right-aligned causal mask."""
    query = torch.arange(rows, device=device)[:, None] % causal_m
    return torch.arange(N, device=device)[None, :] > query + (N - causal_m)


kept_causal_mask = lru_cache(maxsize=1)(causal_mask)  # built once and kept, as a model keeps its mask buffer


def causal_mask_of(x: torch.Tensor, causal_m: int) -> torch.Tensor:
    """The causal mask of x's rows: kept in eager; built from indices while torch.compile traces (inductor fuses it),
    and never kept there, where a mask built on fake tensors would be handed to the next eager call."""
    build = causal_mask if traced(x) else kept_causal_mask
    return build(x.shape[0], x.shape[1], causal_m, str(x.device))


def fill_masked_out(x: torch.Tensor, fusion: Fusion, value: float) -> torch.Tensor:
    """x.masked_fill(~keep, value), the mask broadcast as the user's was: a shared mask's own rows
    (Fusion.mask_group, mask_period) against x's rows viewed as [-1, its rows, mask_group, N], not expanded."""
    dropped = fusion.mask == 0  # the user's ~keep_mask
    if not fusion.mask_shared:
        return x.masked_fill(dropped, value)
    scores, broadcast = fusion.shared_mask_shapes(x.shape[-1])
    return x.reshape(scores).masked_fill(dropped.view(broadcast), value).reshape(x.shape)


def add_bias(x: torch.Tensor, fusion: Fusion) -> torch.Tensor:
    """x + bias, the bias broadcast as the user's was (a shared bias's own rows, as fill_masked_out's mask)."""
    if not fusion.bias_shared:
        return x + fusion.bias
    scores, broadcast = fusion.shared_bias_shapes(x.shape[-1])
    return (x.reshape(scores) + fusion.bias.view(broadcast)).reshape(x.shape)


def prologue(x: torch.Tensor, fusion: Fusion) -> torch.Tensor:
    """The scale, bias and masks as separate torch ops, as a user would write them."""
    if fusion.scale != 1.0:
        x = x * fusion.scale
    if fusion.bias is not None:
        x = add_bias(x, fusion)
    if fusion.mask is not None:
        x = fill_masked_out(x, fusion, float("-inf"))
    if fusion.causal_m is not None:
        x = x.masked_fill(causal_mask_of(x, fusion.causal_m), float("-inf"))
    return x


def prologue_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion) -> tuple[tuple[str, int, int], ...]:
    nbytes, bool_bytes = M * N * elem_size(dtype), M * N
    passes = []
    if fusion.scale != 1.0:
        passes.append(("scale: read x, write x · scale", nbytes, nbytes))
    if fusion.bias is not None:
        passes.append(("add the bias: read x and bias, write", nbytes + fusion.bias_bytes(), nbytes))
    if fusion.mask is not None:
        passes += mask_fill_passes(fusion, bool_bytes, nbytes, "x")
    if fusion.causal_m is not None:
        passes.append(("masked_fill with the kept causal mask", nbytes + bool_bytes, nbytes))
    return tuple(passes)


def mask_fill_passes(fusion: Fusion, bool_bytes: int, nbytes: int, what: str) -> list[tuple[str, int, int]]:
    """~mask (of x's shape, or of a shared mask's own rows: fill_masked_out), then masked_fill of `what`."""
    inverted = fusion.mask_bytes() if fusion.mask_shared else bool_bytes
    return [("invert the mask", fusion.mask_bytes(), inverted),
            (f"masked_fill: read {what} and mask, write", nbytes + inverted, nbytes)]


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    op = torch.log_softmax if fusion.log else torch.softmax
    y = op(prologue(x, fusion), dim=-1, dtype=fusion.out_dtype)
    # a bias of a wider dtype than x's promotes x + bias, as in a user's code; softmax's output is x's dtype
    return y.to(fusion.out_dtype or x.dtype), Launch()


def traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN) -> Traffic:
    nbytes = M * N * elem_size(dtype)
    return Traffic(prologue_traffic(M, N, dtype, fusion) + (("softmax: read, write y", nbytes, nbytes),))


VARIANT = Variant(
    name="eager",
    summary="torch.softmax (after torch ops for a scale and masks): one read and one write, plus a pass each",
    launch=launch,
    traffic=traffic,
    triton=False,
    masked_rows_zero=False,
    float64=True,
)
