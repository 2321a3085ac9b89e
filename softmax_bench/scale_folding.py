"""A compiled model's `softmax_bench.softmax(x * c)` run as `softmax_bench.softmax(x, scale=c)`.

Inductor cannot fuse a multiply into one of our kernels: in a graph, `x * c` before our op is a kernel of its own,
a read and a write of x more and one more launch. `fold_scales` rewrites dynamo's graph before inductor lowers it
(inductor's pre-grad custom pass): a call of softmax_bench.softmax or log_softmax whose x is a tensor times (or
divided by) a Python number, that product used by nothing else, takes the tensor and the number as its scale
(times the scale it was given). The gradient is the same function's. The product is then never rounded to x's
dtype, as inductor does not round it in code it fuses itself (its emulate_precision_casts is off by default).

It is installed the first time torch.compile traces a call of ours (`install`), into inductor's
`pre_grad_custom_pass` only where that is empty: a pass the user set there is left as it is (and nothing folds).
SOFTMAX_BENCH_FOLD_SCALES=0 turns it off.
"""

from __future__ import annotations

import functools
import math
import operator
import os

import torch

FOLD_SCALES = os.environ.get("SOFTMAX_BENCH_FOLD_SCALES", "1") != "0"

MULTIPLIES = {operator.mul, torch.mul, "mul"}  # call_function targets, and Tensor.mul's call_method name
DIVIDES = {operator.truediv, torch.div, "div"}


def scalar_factor(product: torch.fx.Node) -> tuple[torch.fx.Node, float] | None:
    """(t, c) where `product` is t * c, c * t or t / c (as t * (1 / c)) of a floating tensor t and a finite Python
    number c, in t's own dtype and shape; else None."""
    if product.op not in ("call_function", "call_method") or product.kwargs or len(product.args) != 2:
        return None
    a, b = product.args
    number = (int, float)
    if product.target in MULTIPLIES:
        tensor, c = (a, b) if isinstance(b, number) else (b, a)
    elif product.target in DIVIDES and isinstance(b, number) and b != 0:
        tensor, c = a, 1.0 / b
    else:
        return None
    if not isinstance(tensor, torch.fx.Node) or not isinstance(c, number) or isinstance(c, bool) or \
            not math.isfinite(c):
        return None
    before, after = tensor.meta.get("example_value"), product.meta.get("example_value")
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor)
            and before.dtype == after.dtype and before.dtype.is_floating_point and before.shape == after.shape):
        return None
    return tensor, float(c)


def fold_scales(graph: torch.fx.Graph) -> int:
    """Folds each `ours(t * c, ..., scale=s)` of the graph into `ours(t, ..., scale=c·s)`; returns how many."""
    from .dispatch import log_softmax, softmax

    folded = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target not in (softmax, log_softmax) or not node.args:
            continue
        product, scale = node.args[0], node.kwargs.get("scale")
        if not isinstance(product, torch.fx.Node) or len(product.users) != 1 or \
                not (scale is None or isinstance(scale, (int, float))):
            continue
        factor = scalar_factor(product)
        if factor is None:
            continue
        tensor, c = factor
        node.args = (tensor, *node.args[1:])
        node.kwargs = {**node.kwargs, "scale": c * (1.0 if scale is None else float(scale))}
        graph.erase_node(product)
        folded += 1
    return folded


@functools.cache
def install() -> bool:
    """fold_scales as inductor's pre-grad custom pass, where no other pass is set (FOLD_SCALES); whether it is."""
    if not FOLD_SCALES:
        return False
    try:
        from torch._inductor import config
        from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
    except ImportError:  # an inductor without custom passes that can be cached: left as it is
        return False

    class FoldScales(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            fold_scales(graph)

        def uuid(self) -> bytes:  # inductor's cache keys on it: this file's text
            return get_hash_for_files((__file__,))

    if config.pre_grad_custom_pass is not None:
        return False
    config.pre_grad_custom_pass = FoldScales()
    return True
