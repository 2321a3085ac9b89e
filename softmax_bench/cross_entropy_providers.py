"""What `sweep --op cross-entropy` measures: the loss over an M×V block of logits (V, the vocabulary, is the cell's
N), ours and its peers, each checked against torch's loss in `precise` before it is timed.

- forward: the loss of logits that need no gradient (one read of the logits).
- backward: a training step, the forward with the gradient and its backward (`torch.autograd.grad`); its output, the
  logits' gradient, is checked. Its bytes at the least are one copy of the logits (read them, write their gradient).

Providers: `fused` (softmax_bench.cross_entropy), `eager` (torch.nn.functional.cross_entropy), `torch_compile`
(torch.compile of F.cross_entropy(x.float(), t), the upcast transformers' loss does), `liger`
(LigerCrossEntropyFunction) and `quack` (quack.cross_entropy) where installed. Targets are uniform at random,
every IGNORE_EVERY-th row ignored (-100), the mean taken over the rest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import torch
import torch.nn.functional as F

from .cross_entropy import cross_entropy
from .kernels import GRAD_TOLERANCES, TOLERANCES, Launch, Traffic, elem_size
from .kernels import cross_entropy as kernel
from .peers import PeerUnavailable
from .providers import Cell, Prepared, Provider

IGNORE_EVERY = 7
# (atol, rtol) of a loss against the float64 (CPU) or fp32 (GPU) reference of the same logits, by the loss's dtype:
# fp32 (ours, and peers that accumulate in fp32), or the logits' (torch's eager loss of 16-bit logits is 16-bit)
LOSS_TOLERANCES = {**TOLERANCES, torch.float32: (2e-5, 1e-5)}


def loss_cell(cell: Cell, passes: list[str]) -> Cell:
    """The cell with its targets, and the references its passes are checked against: the loss (forward) and the
    logits' gradient of the mean loss (backward), in cell.precise."""
    M, V = cell.x.shape
    generator = torch.Generator(device=cell.x.device).manual_seed(M * 1000 + V)
    target = torch.randint(0, V, (M,), device=cell.x.device, generator=generator)
    target[::IGNORE_EVERY] = -100
    # a copy always: in fp32 on the GPU (precise fp32) .to() would hand back cell.x itself, and the sweep's trials
    # move cell.x in place (sweep.timed), which a leaf that needs a gradient refuses
    x = cell.x.to(cell.precise, copy=True).requires_grad_("backward" in passes)
    loss = F.cross_entropy(x, target)
    grad = torch.autograd.grad(loss, x)[0] if "backward" in passes else None
    return replace(cell, target=target, ref=loss.detach(), ref_grad=grad)


def _torch_compile() -> Callable:
    torch._dynamo.reset()  # a fresh compile per cell, as peers._torch_compile
    return torch.compile(lambda x, t: F.cross_entropy(x.float(), t), dynamic=False)


def _liger() -> Callable:
    try:
        from liger_kernel.ops.cross_entropy import LigerCrossEntropyFunction
    except ImportError:
        raise PeerUnavailable("liger-kernel is not installed (pip install liger-kernel)") from None
    return lambda x, t: LigerCrossEntropyFunction.apply(x, t, None)[0]  # its class weight is positional


def _quack() -> Callable:
    try:
        from quack.cross_entropy import cross_entropy as quack_cross_entropy
    except ImportError:
        raise PeerUnavailable("quack is not installed (pip install quack-kernels)") from None
    return quack_cross_entropy


# name → (kind, the loss function's maker, whether its step writes the gradient over the logits)
LOSSES: dict[str, tuple[str, Callable[[], Callable], bool]] = {
    "fused": ("variant", lambda: cross_entropy, False),
    "eager": ("variant", lambda: F.cross_entropy, False),
    "torch_compile": ("peer", _torch_compile, False),
    "liger": ("peer", _liger, True),
    "quack": ("peer", _quack, False),
}


def _read(M: int, V: int, dtype: torch.dtype) -> Traffic:
    return Traffic((("read the logits", M * V * elem_size(dtype), 0),))


def _one_copy(M: int, V: int, dtype: torch.dtype) -> Traffic:
    nbytes = M * V * elem_size(dtype)
    return Traffic((("read the logits, write their gradient", nbytes, nbytes),))


def _traffic(name: str, pass_: str) -> Callable[[int, int, torch.dtype, object], Traffic]:
    """Ours: the kernel's own passes (kernels/cross_entropy.traffic); a peer: the least its pass must move."""
    if name == "fused":
        return lambda M, V, dtype, fusion: kernel.traffic(M, V, dtype, with_grad=pass_ == "backward")
    return lambda M, V, dtype, fusion: (_one_copy if pass_ == "backward" else _read)(M, V, dtype)


def _provider(name: str, pass_: str) -> Provider:
    kind, make, in_place = LOSSES[name]

    def prepare(cell: Cell) -> Prepared:
        loss_of = make()
        if pass_ == "forward":
            return (lambda: (loss_of(cell.x, cell.target), Launch())), cell.ref
        logits = cell.x.clone() if in_place else cell.x  # a step that overwrites its logits gets a copy of its own

        def step():
            # autograd.grad, not backward(): a gradient written over the logits (Liger's) is their own storage,
            # which AccumulateGrad would copy into .grad of a leaf; a model's logits are no leaf
            xs = logits.detach().requires_grad_()
            return torch.autograd.grad(loss_of(xs, cell.target), xs)[0], Launch()

        return step, cell.ref_grad

    def check_as(cell: Cell) -> tuple[torch.dtype | None, dict]:
        """The output's dtype and tolerances: the forward's loss judged in the dtype it has; the step's gradient in
        the logits', its atol scaled to the mean's gradient (p − onehot over the rows kept: at 4096 rows every
        element is under 3e-4, and an atol of 2e-3 would pass a gradient of zeros)."""
        if pass_ == "forward":
            return None, LOSS_TOLERANCES
        kept = max(int((cell.target != -100).sum()), 1)
        return cell.x.dtype, {dtype: (atol / kept, rtol) for dtype, (atol, rtol) in GRAD_TOLERANCES.items()}

    return Provider(name, kind, _traffic(name, pass_), lambda V, dtype, fusion: None, prepare, pass_,
                    check_as=check_as)


def cross_entropy_providers(names: list[str], passes: list[str]) -> list[Provider]:
    """Ours, then torch, then the peers, for each pass; only `names` when given (config.build_plan has refused
    names the op does not measure: ops.OPS["cross-entropy"].measures, LOSSES' names)."""
    every = [_provider(name, pass_) for pass_ in ("forward", "backward") if pass_ in passes for name in LOSSES]
    return [p for p in every if not names or p.name in names]
