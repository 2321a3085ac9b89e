"""Peers: what a user would pick instead of softmax-bench, measured in the same run so the comparison is fair.
A peer whose package is missing is skipped with a note; a peer that refuses a shape is skipped with its error.
Each peer is a forward function; the sweep times its backward through autograd."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from .kernels import Fusion
from .kernels.eager import prologue
from .ops import call_kwargs, user_function, user_shape


class PeerUnavailable(Exception):
    """The peer cannot run here; the message says why."""


@dataclass(frozen=True)
class Peer:
    name: str
    summary: str
    make: Callable[[Fusion], Callable[[torch.Tensor], torch.Tensor]]  # raises PeerUnavailable
    fuses: bool = False  # can it run a scale, masks and log_softmax too?
    masked_rows_zero: bool = False  # True: a fully masked row gives zeros (softmax_bench's), not NaN (torch's)
    theirs: bool = True  # another project's code: `check` reports its FAIL but does not gate on it


def _torch_compile(fusion: Fusion) -> Callable[[torch.Tensor], torch.Tensor]:
    """The user's eager code (scale, masked_fill, softmax or log_softmax), compiled: inductor fuses it too (and
    compiles its backward, when autograd asks for it)."""
    # A fresh compile per cell: dynamo's recompile limit would otherwise fall back to eager after a few shapes.
    torch._dynamo.reset()
    op = torch.log_softmax if fusion.log else torch.softmax
    return torch.compile(lambda x: op(prologue(x, fusion), dim=-1), dynamic=False)


def _compiled_op(fusion: Fusion) -> Callable[[torch.Tensor], torch.Tensor]:
    """softmax_bench.softmax (or log_softmax) as a compiled model calls it: inside torch.compile, through the
    registered op, with the cell's scale and masks as arguments. Compiled as torch_compile is (no fullgraph), so
    that their host times differ by what each graph does: fullgraph=True alone costs a call ~3 µs of dynamo's
    Python (this machine's CPU, torch 2.14; docs/perf-notes.md, thirty-fifth session), and passing the masks as
    keywords through functools.partial ~1 µs more. That the op compiles with no graph break is
    tests/test_compile.py's."""
    torch._dynamo.reset()
    kwargs = call_kwargs(fusion)
    mask = kwargs.pop("mask", None)  # an input of the compiled model, as a model's mask is (a constant bool view
    # of the uint8 mask fails Inductor's lowering on the GPU: "torch.bool is not supported by torch.iinfo")
    bias = kwargs.pop("bias", None)  # likewise
    op = user_function(fusion)

    shared = fusion.mask_shared or fusion.bias_shared  # x as the user's shape (views traced, not run at each call)

    def model(x, mask, bias):
        y = op(x.view(user_shape(x, fusion)) if shared else x, variant="auto", mask=mask, bias=bias, **kwargs)
        return y.view(x.shape) if shared else y

    compiled = torch.compile(model, dynamic=False)
    return lambda x: compiled(x, mask, bias)


def _liger(fusion: Fusion) -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError:
        raise PeerUnavailable("liger-kernel is not installed (pip install liger-kernel)") from None
    return LigerSoftmaxFunction.apply


def _quack(fusion: Fusion) -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        from quack.softmax import softmax
    except ImportError:
        raise PeerUnavailable("quack is not installed (pip install quack-kernels)") from None
    return softmax


PEERS = {
    peer.name: peer
    for peer in (
        Peer("torch_compile", "torch.compile of the eager code, dynamic=False", _torch_compile, fuses=True),
        Peer("compiled_op", "torch.compile of a function calling softmax_bench.softmax: our op as a model sees it",
             _compiled_op, fuses=True, masked_rows_zero=True, theirs=False),
        Peer("liger", "Liger-Kernel's softmax (LigerSoftmaxFunction)", _liger),
        Peer("quack", "Quack's softmax (CuTe DSL, thread-block clusters)", _quack),
    )
}

# Variants whose code is another project's: the peers but compiled_op, and eager (torch.softmax itself).
THEIRS = frozenset({name for name, peer in PEERS.items() if peer.theirs} | {"eager"})
