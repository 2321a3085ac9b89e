"""The fused prologue every Triton variant applies to what it loads: scale, keep-mask, causal mask, padding."""

import triton
import triton.language as tl

from . import Fusion


@triton.jit
def scale_and_mask(x, rows, cols, inside, scale, mask_ptr, mask_stride, causal_m, N,
                   HAS_SCALE: tl.constexpr, HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr):
    """x (fp32) times scale, with padding and masked-out positions at -inf so they add exp(-inf) = 0 to the sum.

    rows (int64) and cols broadcast against x; inside is False on padding lanes, which were loaded as -inf.
    A plain softmax compiles to nothing here: on the H200 even an always-true select cost two_pass a third of its
    bandwidth on misaligned bf16 rows (docs/perf-notes.md).
    """
    if HAS_SCALE:
        x = x * scale
    if HAS_SCALE or HAS_MASK or CAUSAL:
        keep = inside
        if HAS_MASK:
            keep = keep & (tl.load(mask_ptr + rows * mask_stride + cols, mask=inside, other=0) != 0)
        if CAUSAL:
            # bottom-right aligned: query i = row mod M keeps keys j ≤ i + (N − M)
            keep = keep & (cols <= (rows % causal_m) + (N - causal_m))
        x = tl.where(keep, x, -float("inf"))  # padding back to -inf whatever the sign of scale
    return x


def fusion_args(fusion: Fusion, x) -> dict:
    """The kernel arguments of a Fusion (the mask pointer is x, unused, when there is no mask)."""
    return {
        "scale": float(fusion.scale),
        "mask_ptr": fusion.mask if fusion.mask is not None else x,
        "mask_stride": fusion.mask.stride(0) if fusion.mask is not None else 0,
        "causal_m": fusion.causal_m or 1,
        "HAS_SCALE": fusion.scale != 1.0,
        "HAS_MASK": fusion.mask is not None,
        "CAUSAL": fusion.causal_m is not None,
    }
