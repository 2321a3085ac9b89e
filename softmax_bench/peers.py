"""Peers: what a user would pick instead of softmax-bench, measured in the same run so the comparison is fair.
A peer whose package is missing is skipped with a note; a peer that refuses a shape is skipped with its error."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


class PeerUnavailable(Exception):
    """The peer cannot run here; the message says why."""


@dataclass(frozen=True)
class Peer:
    name: str
    summary: str
    make: Callable[[], Callable[[torch.Tensor], torch.Tensor]]  # raises PeerUnavailable


def _torch_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def _torch_compile() -> Callable[[torch.Tensor], torch.Tensor]:
    # A fresh compile per cell: dynamo's recompile limit would otherwise fall back to eager after a few shapes.
    torch._dynamo.reset()
    return torch.compile(_torch_softmax, dynamic=False)


def _liger() -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        from liger_kernel.ops.softmax import LigerSoftmaxFunction
    except ImportError:
        raise PeerUnavailable("liger-kernel is not installed (pip install liger-kernel)") from None
    return LigerSoftmaxFunction.apply


def _quack() -> Callable[[torch.Tensor], torch.Tensor]:
    try:
        from quack.softmax import softmax
    except ImportError:
        raise PeerUnavailable("quack is not installed (pip install quack-kernels)") from None
    return softmax


PEERS = {
    peer.name: peer
    for peer in (
        Peer("torch_compile", "torch.compile(torch.softmax), dynamic=False", _torch_compile),
        Peer("liger", "Liger-Kernel's softmax forward", _liger),
        Peer("quack", "Quack's softmax (CuTe DSL, thread-block clusters)", _quack),
    )
}
