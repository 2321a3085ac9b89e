"""The op axis of a sweep: what is fused around the softmax, and its reference.

- softmax: y = softmax(x)
- scaled: y = softmax(x · 0.125), a temperature alone (its bytes are a copy's)
- scaled-masked: y = softmax(where(keep, x · 0.125, -inf)), keep a fresh random bool mask of x's shape (90 % kept)
- causal: y = softmax(x · 0.125) under a bottom-right-aligned causal mask, queries = the M rows
- key-padded: scaled-masked with a key-padding mask: 64 consecutive rows share a row of it, as a [B, 1, 1, S] mask
  over [B, H, S, S] scores does (a head's queries), read as it is, not expanded (scaled-masked with
  mask_shape "rows/64")
- biased: y = softmax(x · 0.125 + bias), bias a random tensor of x's shape and dtype (an attention bias as
  transformers adds it), read beside x
- log-softmax: y = log_softmax(x)
- cross-entropy: the loss over x's rows as logits (N the vocabulary), against random targets; its backward pass is
  a training step (softmax_bench.cross_entropy_providers)

The mask of scaled-masked and the bias of biased have x's shape, or the one a sweep's mask_shape gives
(MASK_SHAPES): broadcast over x's rows, and called as a user calls with such a mask.

The Triton variants do it in one pass (the mask, if any, is one more byte an element to read, a bias one more
element); eager and unfused run the scale, bias and masks as separate torch ops, as a user writes them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable

import torch

from . import dispatch
from .errors import BenchError
from .kernels import Fusion
from .kernels.eager import add_bias, causal_mask, fill_masked_out

ATTENTION_SCALE = 0.125  # 1/sqrt(64), a head dimension of 64
KEPT_FRACTION = 0.9


# How a sweep lays out a masked or biased op's mask (bias) over x's M rows, as a user's broadcast one is:
MASK_SHAPES = {
    "full": "x's shape, a row for each row",
    "row": "one row for all of them (a [S] mask)",
    "rows/K": "K consecutive rows share a row (a key-padding [B, 1, 1, S] over [B, H, S, S] scores, K = H·S)",
    "period/K": "K rows, repeated over the batch (an [S, S] or [1, H, S, S] one, K = S or H·S)",
}


def check_mask_shape(spec: str) -> str:
    """spec, if it is one of MASK_SHAPES (K a whole number ≥ 1), else a BenchError that lists them."""
    if spec in ("full", "row") or re.fullmatch(r"(rows|period)/[1-9]\d*", spec):
        return spec
    accepted = "; ".join(f"{name}: {what}" for name, what in MASK_SHAPES.items())
    raise BenchError(f"mask shape {spec!r} is not one of: {accepted} (e.g. rows/64)")


def mask_layout(spec: str, M: int) -> tuple[int, int, int]:
    """(rows of mask, the rows of x that share each: Fusion's mask_group, its mask_period) for M rows of x; a K that
    does not divide M is taken as gcd(M, K)."""
    kind, _, k = check_mask_shape(spec).partition("/")
    if kind == "full":
        return M, 1, 0
    if kind == "row":
        return 1, 1, 0  # a row of row stride 0 (expanded), read once
    k = math.gcd(M, int(k))
    return (M // k, k, 0) if kind == "rows" else (k, 1, k)


def laid_out(spec: str, M: int) -> str:
    """The mask shape mask_layout lays out over M rows for spec: spec itself, or its kind with the K mask_layout takes
    (gcd(M, K) for a K that does not divide M: rows/64 over 100 rows is rows/4)."""
    kind, _, k = check_mask_shape(spec).partition("/")
    if not k:
        return spec
    _, group, period = mask_layout(spec, M)
    return f"{kind}/{group if kind == 'rows' else period}"


def laid_out_otherwise(op: str, asked: str, Ms) -> str | None:
    """A line that says where a sweep of op with --mask-shape `asked` lays its mask or bias out otherwise (laid_out)
    at some of its row counts Ms, or None."""
    swept = get_op(op)
    spec = swept.mask_spec(asked)
    if spec is None:
        return None
    other = {M: shape for M in sorted(set(Ms)) if (shape := swept.mask_shape_at(asked, M)) != spec}
    if not other:
        return None
    at = ", ".join(f"{shape} at M = {M}" for M, shape in other.items())
    return (f"note: mask shape {spec}: K does not divide every M, so a row of mask is shared by gcd(M, K) rows there: "
            f"{at} (rows.csv's mask_shape says each cell's)")


@dataclass(frozen=True)
class Op:
    name: str
    summary: str
    # x (M×N) → the fusion to apply, masks built on x's device; an op with a mask or bias laid out by mask_shape
    # (shaped) also takes mask_layout's (rows, group, period)
    fusion: Callable[..., Fusion]
    measures: tuple[str, ...] | None = None  # the variants and peers a sweep of the op can run (None: all)
    shaped: bool = False
    mask_shape: str | None = None  # the mask shape an op lays out of its own (key-padded's), never another

    def mask_spec(self, asked: str) -> str | None:
        """The mask shape a sweep of the op lays out: the one asked for (shaped), its own, or None (no mask or bias
        laid out over rows)."""
        return asked if self.shaped else self.mask_shape

    def mask_shape_at(self, asked: str, M: int) -> str | None:
        """The mask shape a sweep of the op with --mask-shape `asked` lays out over M rows (laid_out of mask_spec),
        or None."""
        spec = self.mask_spec(asked)
        return spec and laid_out(spec, M)

    def check_mask_shape(self, spec: str) -> str:
        """spec, if it is one of MASK_SHAPES and the op has a mask or bias to lay out (any op takes "full"), else a
        BenchError that says what is accepted."""
        if check_mask_shape(spec) != "full" and not self.shaped:
            shaped = ", ".join(op.name for op in OPS.values() if op.shaped)
            raise BenchError(f"mask shape {spec}: op {self.name} has no mask or bias to lay out; mask shapes apply to "
                             f"--op {shaped}")
        return spec

    def fusion_for(self, x: torch.Tensor, mask_shape: str = "full", log: bool = False) -> Fusion:
        """The op's fusion for x, its mask or bias laid out as mask_shape says (MASK_SHAPES); with `log`, the
        log_softmax of the op (a sweep's --log)."""
        if self.shaped:
            fusion = self.fusion(x, *mask_layout(mask_shape, x.shape[0]))
        else:
            self.check_mask_shape(mask_shape)
            fusion = self.fusion(x)
        return replace(fusion, log=True) if log else fusion

    def shapes_fusion(self, M: int, N: int, dtype: torch.dtype, mask_shape: str = "full", log: bool = False) -> Fusion:
        """fusion_for an M×N input of dtype, its masks made on the meta device: their shapes and bytes (the traffic
        model's), no memory."""
        return self.fusion_for(torch.empty(M, N, device="meta", dtype=dtype), mask_shape, log)


def _rows(make: Callable, x: torch.Tensor, rows: int, group: int, period: int) -> torch.Tensor:
    """`rows` rows of x's width made by make(shape); a row that no rows share (mask_layout's "row") expanded to
    x's rows (row stride 0)."""
    made = make((rows, x.shape[1]))
    return made.expand(x.shape) if rows == 1 and group == 1 and period == 0 else made


def _scaled_masked(x: torch.Tensor, rows: int, group: int, period: int) -> Fusion:
    keep = _rows(lambda shape: torch.rand(shape, device=x.device) < KEPT_FRACTION, x, rows, group, period)
    return Fusion(scale=ATTENTION_SCALE, mask=keep.view(torch.uint8), mask_group=group, mask_period=period)


KEY_PADDING_ROWS = 64  # the rows (queries of a head) that share a row of a key-padding mask
KEY_PADDING_MASK = f"rows/{KEY_PADDING_ROWS}"


def _key_padded(x: torch.Tensor) -> Fusion:
    return _scaled_masked(x, *mask_layout(KEY_PADDING_MASK, x.shape[0]))


def _biased(x: torch.Tensor, rows: int, group: int, period: int) -> Fusion:
    bias = _rows(lambda shape: torch.randn(shape, device=x.device).to(x.dtype), x, rows, group, period)
    return Fusion(scale=ATTENTION_SCALE, bias=bias, bias_group=group, bias_period=period)


OPS = {
    op.name: op
    for op in (
        Op("softmax", "softmax(x)", lambda x: Fusion()),
        Op("scaled", f"softmax(x · {ATTENTION_SCALE}), a temperature alone", lambda x: Fusion(scale=ATTENTION_SCALE)),
        Op("scaled-masked", f"softmax(x · {ATTENTION_SCALE}, a random keep-mask of x's shape, {KEPT_FRACTION:.0%} kept)",
           _scaled_masked, shaped=True),
        Op("causal", f"softmax(x · {ATTENTION_SCALE}) under a bottom-right causal mask, the M rows as queries",
           lambda x: Fusion(scale=ATTENTION_SCALE, causal_m=x.shape[0])),
        Op("biased", f"softmax(x · {ATTENTION_SCALE} + bias), a random bias of x's shape and dtype", _biased,
           shaped=True),
        Op("log-softmax", "log_softmax(x)", lambda x: Fusion(log=True)),
        Op("key-padded", f"softmax(x · {ATTENTION_SCALE}, a key-padding mask: {KEY_PADDING_ROWS} consecutive rows share "
           f"a row of it, {KEPT_FRACTION:.0%} kept; a [B, 1, 1, S] mask over [B, H, S, S] scores, called as such)",
           _key_padded, mask_shape=KEY_PADDING_MASK),
        Op("cross-entropy", "the mean cross-entropy of x's rows as logits (N: the vocabulary) against random targets, "
           "every 7th ignored; backward: a training step, the forward with the gradient and its backward",
           lambda x: Fusion(), measures=("fused", "eager", "torch_compile", "liger", "quack")),
    )
}


# Ops whose bytes are not a copy's (a mask read beside x, a causal row's columns not read): tables show their cells
# as % of their own roofline.
FUSED_OPS = ("scaled-masked", "causal", "key-padded", "biased")


def pass_bytes(op: str, pass_: str) -> tuple[int, str]:
    """How many M·N elements a pass's GB/s counts (sweep.moved_bytes), and what they are, as tables and plots say."""
    backward = pass_ == "backward"
    if op == "cross-entropy":
        return (2, "a training step: read the logits, write their gradient") if backward else (1, "read the logits")
    return (3, "read y and dy, write dx") if backward else (2, "read x, write y")


def op_label(op: str, mask_shape: str = "full", log: bool = False) -> str:
    """How titles name a run's op: its name, its mask shape where not full, and whether its log_softmax is taken."""
    return op + (f" (mask {mask_shape})" if mask_shape != "full" else "") + (", its log_softmax" if log else "")


def judged_by_roofline(rows, meta: dict) -> bool:
    """Whether a run's cells are shown as % of their own roofline (tables, plots): a fused op's run whose rows
    hold pct_of_roofline (runs from before it was a column show % of a copy)."""
    return (meta.get("op", "softmax") in FUSED_OPS and "pct_of_roofline" in rows
            and bool(rows["pct_of_roofline"].notna().any()))


def get_op(name: str) -> Op:
    if name not in OPS:
        raise BenchError(f"unknown op {name!r}; choose from {', '.join(OPS)}")
    return OPS[name]


def reference(x: torch.Tensor, fusion: Fusion, precise: torch.dtype) -> torch.Tensor:
    """softmax (log_softmax) of where(keep, x · scale + bias, -inf) in `precise` (float64 on CPU, fp32 on GPU), a bias
    at or below its dtype's minimum masking its position out; masked rows are zeros (-inf)."""
    z = x.to(precise) * fusion.scale
    if fusion.bias is not None:
        bias = fusion.bias.to(precise).masked_fill(fusion.bias <= torch.finfo(fusion.bias.dtype).min, float("-inf"))
        z = add_bias(z, replace(fusion, bias=bias))
    if fusion.mask is not None:
        z = fill_masked_out(z, fusion, float("-inf"))
    if fusion.causal_m is not None:
        z = z.masked_fill(causal_mask(z.shape[0], z.shape[1], fusion.causal_m, str(z.device)), float("-inf"))
    ref = (torch.log_softmax if fusion.log else torch.softmax)(z, dim=-1)
    if fusion.plain:
        return ref
    return ref.masked_fill((z == float("-inf")).all(dim=-1, keepdim=True), float("-inf") if fusion.log else 0.0)


def masked_rows(ref: torch.Tensor, fusion: Fusion) -> torch.Tensor:
    """The rows of a reference that are entirely masked out (zeros; log_softmax: -inf), as an (M, 1) bool."""
    return (ref == (float("-inf") if fusion.log else 0.0)).all(dim=-1, keepdim=True)


def backward_reference(y: torch.Tensor, dy: torch.Tensor, fusion: Fusion, precise: torch.dtype) -> torch.Tensor:
    """dx in `precise` from a forward's own output y and the gradient dy: scale · y · (dy − Σ dy·y), or
    scale · (dy − e^y · Σ dy) for log_softmax, zero where the fusion masks a position out."""
    y, dy = y.to(precise), dy.to(precise)
    if fusion.log:
        dx = dy - y.exp() * dy.sum(dim=-1, keepdim=True)
    else:
        dx = y * (dy - (dy * y).sum(dim=-1, keepdim=True))
    if fusion.mask is not None:
        dx = fill_masked_out(dx, fusion, 0.0)
    if fusion.causal_m is not None:
        dx = dx.masked_fill(causal_mask(dx.shape[0], dx.shape[1], fusion.causal_m, str(dx.device)), 0.0)
    return dx * fusion.scale


def call_kwargs(fusion: Fusion) -> dict:
    """A Fusion of an M×N x as softmax_bench.softmax takes it: scale, a bool mask of x's shape (a shared mask: of
    user_shape's, broadcast over its leading dims), causal."""
    kwargs = {}
    if fusion.scale != 1.0:
        kwargs["scale"] = fusion.scale
    if fusion.mask_shared:
        kwargs["mask"] = fusion.mask.view(torch.bool).view(fusion.shared_mask_shapes(fusion.mask.shape[1])[1])
    elif fusion.mask is not None:
        kwargs["mask"] = fusion.mask.view(torch.bool)
    if fusion.bias_shared:
        kwargs["bias"] = fusion.bias.view(fusion.shared_bias_shapes(fusion.bias.shape[1])[1])
    elif fusion.bias is not None:
        kwargs["bias"] = fusion.bias
    if fusion.causal_m is not None:
        kwargs["causal"] = True  # a 2-D x: its M rows are the queries, causal_m = M
    return kwargs


def user_function(fusion: Fusion) -> Callable[..., torch.Tensor]:
    """What a user calls for the fusion's op: softmax_bench.softmax, or log_softmax for fusion.log."""
    return dispatch.log_softmax if fusion.log else dispatch.softmax


def user_shape(x: torch.Tensor, fusion: Fusion) -> tuple[int, ...]:
    """The shape a user calls with x's M×N rows: x's own, or for a shared mask (bias) [−1, its rows, the rows
    sharing each, N], as the scores a [B, 1, 1, S] mask is broadcast over."""
    if fusion.mask_shared:
        return fusion.shared_mask_shapes(x.shape[-1])[0]
    return fusion.shared_bias_shapes(x.shape[-1])[0] if fusion.bias_shared else tuple(x.shape)


def user_call(x: torch.Tensor, fusion: Fusion, variant: str) -> Callable[[], torch.Tensor]:
    """softmax_bench.softmax (log_softmax for fusion.log) of x with the fusion's arguments and `variant`, as a user
    calls it (on x in user_shape, y back as x's rows)."""
    call = partial(user_function(fusion), variant=variant, **call_kwargs(fusion))
    if not (fusion.mask_shared or fusion.bias_shared):
        return partial(call, x)
    shape = user_shape(x, fusion)
    return lambda: call(x.view(shape)).view(x.shape)
