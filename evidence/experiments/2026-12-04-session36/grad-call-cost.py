"""The host cost of an eager call with a gradient, on a CPU: softmax_bench.softmax of an x that requires one, through
the registered op (torch.ops.softmax_bench.softmax, its autograd wrapper and the dispatcher: how every such call went
until the thirty-sixth session) and as softmax_bench.softmax now calls it (the op's autograd formula as a
torch.autograd.Function, library.EagerAutograd), beside torch.softmax.

    PYTHONPATH=. python3 evidence/experiments/2026-12-04-session36/grad-call-cost.py [--rounds 7 --calls 20000]

A 4×8 fp32 CPU x (torch's own work a call is then small). Rows, µs a call (best of the rounds):
- forward: a plan that allocates y and launches nothing is kept as the call's (softmax_bench.replay), so that the
  forward times the Python around the kernels alone;
- step, plans kept: the forward and y.backward(dy), a plan that launches nothing kept for the backward too
  (replay.backward_key, from the thirty-sixth session): the Python around an eager training step's kernels;
- step, variant 'eager': the forward and y.backward(dy) with the backward's torch ops (as a CPU runs them): the
  backward's path through the op or the Function, plus torch's ops, beside torch.softmax's step;
- loss step: softmax_bench.cross_entropy's forward and backward, its kernels stubbed (loss_rows).
"""

import argparse
import os
import timeit

os.environ.setdefault("TRITON_INTERPRET", "1")  # cross_entropy takes CPU logits only so (its kernels are stubbed)

import torch

import softmax_bench
from softmax_bench import replay


def loss_rows(args) -> dict:
    """softmax_bench.cross_entropy of 4×96 logits that need a gradient, forward and loss.backward(), its kernels
    stubbed (the forward's: a loss, lse and gradient made for each call; the backward's scale: nothing): through the
    registered op as before, as now, beside torch.nn.functional.cross_entropy."""
    import sys

    module = sys.modules["softmax_bench.cross_entropy"]
    logits, target = torch.randn(4, 96, requires_grad=True), torch.randint(0, 96, (4,))
    from softmax_bench.kernels import cross_entropy as kernels

    module._loss_and_gradient = lambda *args, **kwargs: (torch.ones(()), torch.zeros(4), torch.zeros(4, 96))
    kernels.scale_unless_one = lambda rows, dloss: None  # the backward's kernel (a loss gradient of 1: no pass)
    op_arguments = (logits, target, None, -100, "mean", 0.0, 0.0, None, True, None)

    def through_op():
        loss, _, _ = module._cross_entropy(*op_arguments)
        loss.backward()

    return {"loss step, softmax_bench.cross_entropy (kernels stubbed)":
            lambda: softmax_bench.cross_entropy(logits, target).backward(),
            "loss step, through the op (kernels stubbed)": through_op,
            "loss step, torch.nn.functional.cross_entropy":
            lambda: torch.nn.functional.cross_entropy(logits, target).backward()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    x = torch.randn(4, 8, requires_grad=True)
    dy = torch.randn(4, 8)
    allocate = lambda x, mask, other: torch.empty_like(x)  # noqa: E731  a plan that launches nothing
    replay.PLANS[replay.plan_key(x, -1, None, None, False, "auto")] = allocate
    if hasattr(replay, "backward_key"):  # the thirty-sixth session's: a backward replays its plan too
        y = torch.softmax(x.detach(), -1)
        replay.PLANS[replay.backward_key(y, dy, -1, None, None, False, "auto", False)] = allocate
    op = torch.ops.softmax_bench.softmax

    def step(fn):
        def run():
            fn().backward(dy)
        return run

    rows = {
        "forward, softmax_bench.softmax(x)": lambda: softmax_bench.softmax(x),
        "forward, through the op": lambda: op(x, -1, None, None, False, "auto", None, None),
        "forward, torch.softmax(x, -1)": lambda: torch.softmax(x, -1),
        "step, softmax_bench.softmax(x), plans kept": step(lambda: softmax_bench.softmax(x)),
        "step, through the op, plans kept": step(lambda: op(x, -1, None, None, False, "auto", None, None)),
        "step, softmax_bench.softmax(x, variant='eager')": step(lambda: softmax_bench.softmax(x, variant="eager")),
        "step, through the op, variant 'eager'": step(lambda: op(x, -1, None, None, False, "eager", None, None)),
        "step, torch.softmax(x, -1)": step(lambda: torch.softmax(x, -1)),
    }
    rows.update(loss_rows(args))
    for name, call in rows.items():
        best = min(timeit.repeat(call, number=args.calls, repeat=args.rounds)) / args.calls * 1e6
        print(f"{name:55s} {best:7.2f} µs")


if __name__ == "__main__":
    main()
