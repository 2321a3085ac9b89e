"""What a sweep measures, and how each is checked: a Provider a variant, auto or a peer (forward or backward) for
the cells of a sweep, with its reference and tolerance; `check` judges an output against the reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .dispatch import auto_choice, backward_for
from .errors import BenchError
from .kernels import (TOLERANCES, Backward, Fusion, Launch, Traffic, Variant, backward_traffic, backwards,
                      one_pass_traffic, variants)
from .ops import backward_reference, user_call
from .peers import PEERS, Peer


@dataclass(frozen=True)
class Cell:
    """What a cell's providers run on and are checked against. The forward's references are in `precise` (float64
    on CPU, fp32 on GPU); a backward gets dy and is checked against dx computed from its own y."""

    x: torch.Tensor
    fusion: Fusion
    precise: torch.dtype
    ref: torch.Tensor | None = None  # the forward's, fully masked rows as the Triton variants give them
    ref_nan_rows: torch.Tensor | None = None  # the same with torch's NaN there
    dy: torch.Tensor | None = None  # the gradient of y, for a backward
    target: torch.Tensor | None = None  # a loss's class indices, one a row (cross_entropy_providers)
    ref_grad: torch.Tensor | None = None  # a loss's reference gradient of the logits


# A provider's call (output, Launch) and what it must give.
Prepared = tuple[Callable[[], tuple[torch.Tensor, Launch]], torch.Tensor]


@dataclass(frozen=True)
class Provider:
    """Something the sweep measures in one pass: one of our variants (or backwards), `auto`, or a peer."""

    name: str
    kind: str  # "variant", "auto" or "peer"
    traffic: Callable[[int, int, torch.dtype, Fusion], Traffic]
    unsupported: Callable[[int, torch.dtype, Fusion], str | None]
    prepare: Callable[[Cell], Prepared]
    pass_: str = "forward"
    # The call a user makes, which is checked and timed (None: prepare's); prepare's run says what was launched.
    user_call: Callable[[Cell], Callable[[], torch.Tensor]] | None = None
    # The cell → the output's dtype (None: whatever float dtype it has) and tolerances by dtype (check_as None: the
    # cell's dtype, and TOLERANCES or, for a backward, GRAD_TOLERANCES)
    check_as: Callable[[Cell], tuple[torch.dtype | None, dict]] | None = None


def _softmax_call(name: str) -> Callable[[Cell], Callable[[], torch.Tensor]]:
    """softmax_bench.softmax (log_softmax) of the cell's x with variant=name and its scale, mask and causal."""
    return lambda cell: user_call(cell.x, cell.fusion, name)


def _variant_provider(variant: Variant) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        expected = cell.ref if variant.masked_rows_zero else cell.ref_nan_rows  # eager: NaN, as torch gives them
        return (lambda: variant.launch(cell.x, cell.fusion)), expected

    return Provider(variant.name, "variant", variant.traffic, lambda N, dtype, fusion: variant.unsupported(N, dtype),
                    prepare, user_call=_softmax_call(variant.name))


def _picked(N: int, dtype: torch.dtype, fusion: Fusion) -> Variant:
    return variants()[auto_choice(N, dtype, log=fusion.log, form=fusion.table_form)[0]]


def _auto_provider() -> Provider:
    def prepare(cell: Cell) -> Prepared:
        chosen = _picked(cell.x.shape[1], cell.x.dtype, cell.fusion)

        def call():
            y, launch = chosen.launch(cell.x, cell.fusion)
            return y, Launch({"picked": chosen.name, **launch.config}, launch.compiled)

        return call, cell.ref

    return Provider(
        "auto", "auto",
        lambda M, N, dtype, fusion: _picked(N, dtype, fusion).traffic(M, N, dtype, fusion),
        lambda N, dtype, fusion: _picked(N, dtype, fusion).unsupported(N, dtype),
        prepare,
        user_call=_softmax_call("auto"),
    )


def _peer_unsupported(peer: Peer) -> Callable[[int, torch.dtype, Fusion], str | None]:
    return lambda N, dtype, fusion: (
        None if fusion.plain or peer.fuses else f"{peer.name} computes a plain softmax: no scale, mask or log to fuse")


def _peer_provider(peer: Peer) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        fn = peer.make(cell.fusion)
        return (lambda: (fn(cell.x), Launch())), cell.ref if peer.masked_rows_zero else cell.ref_nan_rows

    return Provider(peer.name, "peer", one_pass_traffic, _peer_unsupported(peer), prepare)


def _our_y(cell: Cell) -> torch.Tensor:
    """The forward output a backward of ours gets: auto's."""
    return _picked(cell.x.shape[1], cell.x.dtype, cell.fusion).launch(cell.x, cell.fusion)[0]


def _backward_provider(backward: Backward) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        y = _our_y(cell)
        fusion = cell.fusion.without_bias()
        return (lambda: backward.launch(y, cell.dy, fusion)), backward_reference(y, cell.dy, fusion, cell.precise)

    return Provider(backward.name, "variant", backward.traffic, lambda N, dtype, fusion: backward.unsupported(N, dtype),
                    prepare, "backward")


def _no_backward_provider(variant: Variant) -> Provider:
    runs = "fused's, cluster's or two_pass's" if variant.triton else "eager's"
    reason = f"{variant.name} has no backward of its own: softmax_bench's autograd runs {runs}"
    return Provider(variant.name, "variant", backward_traffic, lambda N, dtype, fusion: reason, None, "backward")


def _auto_backward_provider() -> Provider:
    def picked(N: int, dtype: torch.dtype, fusion: Fusion) -> Backward:
        return backward_for(_picked(N, dtype, fusion), N, dtype)

    def prepare(cell: Cell) -> Prepared:
        y = _our_y(cell)
        chosen = picked(cell.x.shape[1], cell.x.dtype, cell.fusion)

        fusion = cell.fusion.without_bias()

        def call():
            dx, launch = chosen.launch(y, cell.dy, fusion)
            return dx, Launch({"picked": chosen.name, **launch.config}, launch.compiled)

        return call, backward_reference(y, cell.dy, cell.fusion, cell.precise)

    def autograd_call(cell: Cell) -> Callable[[], torch.Tensor]:
        """The backward as a model runs it: autograd through softmax_bench's formula (library.EagerAutograd)."""
        x = cell.x.detach().requires_grad_()
        y = user_call(x, cell.fusion, "auto")()
        return lambda: torch.autograd.grad(y, x, cell.dy, retain_graph=True)[0]

    return Provider(
        "auto", "auto",
        lambda M, N, dtype, fusion: picked(N, dtype, fusion).traffic(M, N, dtype, fusion),
        lambda N, dtype, fusion: picked(N, dtype, fusion).unsupported(N, dtype),
        prepare, "backward", autograd_call,
    )


def _backward_peer_provider(peer: Peer) -> Provider:
    """The peer's forward run once with autograd; its backward timed (torch.autograd.grad, the graph kept)."""

    def prepare(cell: Cell) -> Prepared:
        fn = peer.make(cell.fusion)
        x = cell.x.detach().requires_grad_()
        y = fn(x)

        def call():
            return torch.autograd.grad(y, x, cell.dy, retain_graph=True)[0], Launch()

        return call, backward_reference(y.detach(), cell.dy, cell.fusion, cell.precise)

    return Provider(peer.name, "peer", backward_traffic, _peer_unsupported(peer), prepare, "backward")


def providers(names: list[str], passes: list[str] = ["forward"], op: str = "softmax") -> list[Provider]:
    """For each pass: our variants (backward: our backwards), auto, then the peers; only `names` when given
    (unknown names are an error). The cross-entropy op has its own (cross_entropy_providers)."""
    if op == "cross-entropy":
        from .cross_entropy_providers import cross_entropy_providers

        return cross_entropy_providers(names, passes)
    every = []
    if "forward" in passes:
        every += [_variant_provider(v) for v in variants().values()] + [_auto_provider()]
        every += [_peer_provider(p) for p in PEERS.values()]
    if "backward" in passes:
        ours = backwards()
        every += [_backward_provider(ours[v.name]) if v.name in ours else _no_backward_provider(v)
                  for v in variants().values()]
        every += [_auto_backward_provider()] + [_backward_peer_provider(p) for p in PEERS.values()]
    if not names:
        return every
    known = {p.name for p in every}
    for name in names:
        if name not in known:
            raise BenchError(f"unknown variant {name!r}; choose from {', '.join(known)}")
    return [p for p in every if p.name in names]


def check(y: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype,
          tolerances: dict[torch.dtype, tuple[float, float]] = TOLERANCES) -> tuple[float, str | None]:
    """max |y - ref| (NaN where both are NaN, and equal infinities, count as equal), and why y is wrong (None when
    it is within the dtype's tolerance everywhere)."""
    if y.shape != ref.shape or y.dtype != dtype:
        return float("nan"), f"wrong output: {tuple(y.shape)} {y.dtype}, expected {tuple(ref.shape)} {dtype}"
    y = y.to(ref.dtype)
    diff = (y - ref).abs()
    atol, rtol = tolerances[dtype]
    bad = ~((diff <= atol + rtol * ref.abs()) | (y == ref) | (y.isnan() & ref.isnan()))  # any other NaN is bad
    max_err = float(diff.nan_to_num(nan=0.0).max()) if diff.numel() else 0.0
    if bool(bad.any()):
        not_finite = ~y.isfinite() & ref.isfinite()  # NaN or inf where the reference is finite
        if bool(not_finite.any()):
            off = bad & ~not_finite
            worst = float(diff[off].max()) if bool(off.any()) else 0.0
            return max_err, (f"{int(not_finite.sum())} elements are NaN or inf where the reference is finite"
                             + (f"; {int(off.sum())} more off by up to {worst:.3g}" if bool(off.any()) else ""))
        return max_err, f"{int(bad.sum())} elements off by up to {max_err:.3g} (atol {atol}, rtol {rtol})"
    return max_err, None


def cell_input(M: int, N: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """The random input of a cell: logits of standard deviation 3 (never time on zeros)."""
    return torch.randn(M, N, device=device, dtype=torch.float32).mul_(3.0).to(dtype)
