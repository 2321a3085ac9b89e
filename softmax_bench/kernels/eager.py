"""eager: what a user writes in torch: torch.softmax (or log_softmax), after a scale and masked_fill as separate ops
when asked for — each of those is another pass over memory, which the Triton variants absorb.

Unlike the Triton variants, a row that is entirely -inf (fully masked) gives NaN here (torch's behaviour). It also
takes float64, which the Triton variants do not: gradcheck runs through it."""

from __future__ import annotations

from functools import lru_cache

import torch

from . import PLAIN, Fusion, Launch, Traffic, Variant, elem_size


def causal_mask(rows: int, N: int, causal_m: int, device: str) -> torch.Tensor:
    """The masked-out positions (True) of a bottom-right-aligned causal mask."""
    query = torch.arange(rows, device=device)[:, None] % causal_m
    return torch.arange(N, device=device)[None, :] > query + (N - causal_m)


kept_causal_mask = lru_cache(maxsize=1)(causal_mask)  # built once and kept, as a model keeps its mask buffer


def prologue(x: torch.Tensor, fusion: Fusion) -> torch.Tensor:
    """The scale and masks as separate torch ops, as a user would write them."""
    if fusion.scale != 1.0:
        x = x * fusion.scale
    if fusion.mask is not None:
        x = x.masked_fill(fusion.mask == 0, float("-inf"))  # the user's ~keep_mask
    if fusion.causal_m is not None:
        # under torch.compile the mask is computed from indices (inductor fuses it); eager keeps a buffer
        build = causal_mask if torch.compiler.is_compiling() else kept_causal_mask
        x = x.masked_fill(build(x.shape[0], x.shape[1], fusion.causal_m, str(x.device)), float("-inf"))
    return x


def prologue_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion) -> tuple[tuple[str, int, int], ...]:
    nbytes, bool_bytes = M * N * elem_size(dtype), M * N
    passes = []
    if fusion.scale != 1.0:
        passes.append(("scale: read x, write x · scale", nbytes, nbytes))
    if fusion.mask is not None:
        passes.append(("invert the mask", fusion.mask_bytes(), bool_bytes))
        passes.append(("masked_fill: read x and mask, write", nbytes + bool_bytes, nbytes))
    if fusion.causal_m is not None:
        passes.append(("masked_fill with the kept causal mask", nbytes + bool_bytes, nbytes))
    return tuple(passes)


def launch(x: torch.Tensor, fusion: Fusion = PLAIN) -> tuple[torch.Tensor, Launch]:
    op = torch.log_softmax if fusion.log else torch.softmax
    return op(prologue(x, fusion), dim=-1, dtype=fusion.out_dtype), Launch()


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
