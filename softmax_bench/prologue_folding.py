"""What a compiled model computes before a call of ours, given to the call: `softmax_bench.softmax(x * c)` runs as
`softmax_bench.softmax(x, scale=c)`, `softmax_bench.softmax(x.masked_fill(~keep, -inf))` as
`softmax_bench.softmax(x, mask=keep)`, and `softmax_bench.softmax(x.float())` as `softmax_bench.softmax(x,
dtype=torch.float32)`.

Inductor cannot fuse a pointwise op into one of our kernels: in a graph, `x * c`, a masked_fill or a cast before our
op is a kernel of its own, a read and a write of x more and one more launch. `fold_prologues` rewrites dynamo's graph
before inductor lowers it (inductor's pre-grad custom pass). A call of softmax_bench.softmax or log_softmax whose x
is one of these, used by nothing else, takes what it was computed from:
- a floating tensor times (or divided by) a finite Python number, in the tensor's dtype and shape: the number goes
  into the scale (times the scale the call was given). The product is then never rounded to x's dtype, as inductor
  does not round it in code it fuses itself (its emulate_precision_casts is off by default);
- a tensor with -inf filled in where a bool tensor is True, in the tensor's shape, for a call with no mask, no bias
  and no scale or a positive one (a negative scale would turn that -inf into +inf): the bool tensor's negation
  becomes the mask (`~keep`'s keep itself). A row masked whole gives zeros either way (softmax_bench's contract for
  a row all -inf), and the gradient is 0 at every position masked either way;
- a 16-bit tensor cast to fp32 (`t.float()`, `t.to(torch.float32)`), for a call given no dtype: the call on t with
  dtype=torch.float32, which reads t in its own dtype and computes as before (`softmax(scores.float())`, as Llama's
  reference code writes it: torch's meaning of dtype= is that cast).
The gradient is the same function's.

A call of ours whose x is another call of ours (after the folds: `log_softmax(softmax(x, mask=keep) * c)`), or a
sum of two tensors (`softmax(scores + bias)`: an additive mask written as a sum, which our bias= would not give the
same values: it masks at the dtype's minimum), with auto's variant, on CUDA and within the CHAIN_ rules (rows up to
8192 wide, and a small x or narrow rows), runs as torch ops (the unfused variant, which keeps softmax_bench's
contract for a row masked whole) that inductor fuses with the other call or the sum into one kernel a direction,
where ours would be one a call after inductor's own (`fuse_chains`).

It is installed the first time torch.compile traces a call of ours (`install`), into inductor's
`pre_grad_custom_pass` only where that is empty: a pass the user set there is left as it is (and nothing folds).
SOFTMAX_BENCH_FOLD_PROLOGUES=0 turns it off; SOFTMAX_BENCH_FUSE_CHAINS=0 the chains' and sums' rule alone.
"""

from __future__ import annotations

import functools
import math
import operator
import os

import torch
from torch.fx import Node

FOLD_PROLOGUES = os.environ.get("SOFTMAX_BENCH_FOLD_PROLOGUES", "1") != "0"
FUSE_CHAINS = os.environ.get("SOFTMAX_BENCH_FUSE_CHAINS", "1") != "0"
# A chain of our calls runs as torch ops (fuse_chains) at rows up to CHAIN_MAX_N wide, where x is at most
# CHAIN_HOST_BOUND_BYTES or its rows at most CHAIN_GPU_FASTER_N[its element's bytes] wide. On the H100 (sixty-first
# session, evidence/experiments/2026-12-06-session61/chain.py, a compiled training step of step-host's model): a step
# of x up to 8 MiB at N ≤ 8192 is the host's time (~250–280 µs), and took 0.905–0.945× of our kernels' µs as torch
# ops (bf16 and fp32, ten shapes, 16×8192 to 2048×2048); at 2^24 elements the torch ops' GPU time is shorter at bf16
# N = 1024 (0.091 ms against 0.114) and fp32 N = 1024 to 8192 (4096: 0.161 against 0.228), longer at bf16 N = 2048
# to 32768 (4096: 0.144 against 0.115) and fp32 from 16384, where inductor splits a reduction of few rows (fp32
# 16×16384: 1.41× our kernels' µs a step). On the H200 the rule chose the faster of the two at all six cells of 2^24
# elements measured (bf16 and fp32 at 1024, 4096, 16384).
CHAIN_MAX_N = 8192
CHAIN_HOST_BOUND_BYTES = 8 * 2**20
CHAIN_GPU_FASTER_N = {2: 1024, 4: 8192}
# A sum before a call of ours (softmax(x + b)) runs as torch ops under the same rules with SUM_GPU_FASTER_N: on the
# H200 (sixty-first session, prologue.py, b of x's shape, 2^24 elements, GPU ms forward / forward + backward) the
# torch ops, which inductor fuses with the add, against inductor's add and then our kernel: bf16 1024 0.027 / 0.070
# against 0.043 / 0.086, 4096 0.038 / 0.080 against 0.043 / 0.086, 16384 0.049 / 0.083 against 0.044 / 0.088; fp32
# 1024 to 32768 0.047–0.066 / 0.130–0.154 against 0.079–0.081 / 0.163–0.165; at 64×4096 (bf16 and fp32) a forward
# call 44–47 µs against 56–58 (the host's), and at bf16 16×32768 97 against 75 (inductor splits the reduction).
SUM_GPU_FASTER_N = {2: 4096, 4: 8192}
CHAIN_DEVICES = ("cuda",)

MULTIPLIES = {operator.mul, torch.mul, "mul"}  # call_function targets, and Tensor.mul's call_method name
DIVIDES = {operator.truediv, torch.div, "div"}
MASKED_FILLS = {torch.masked_fill, "masked_fill"}
SUMS = {operator.add, operator.sub, torch.add, torch.sub, "add", "sub"}
INVERTS = {operator.invert, torch.logical_not, torch.bitwise_not, "logical_not", "bitwise_not"}


def same_layout(before, after) -> bool:
    """Whether dynamo's example values of a tensor and of what was computed from it have one dtype, floating, and
    one shape."""
    before, after = before.meta.get("example_value"), after.meta.get("example_value")
    return isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and before.dtype == after.dtype \
        and before.dtype.is_floating_point and before.shape == after.shape


def scalar_factor(product: Node) -> tuple[Node, float] | None:
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
    if not isinstance(tensor, Node) or not isinstance(c, number) or isinstance(c, bool) or not math.isfinite(c):
        return None
    return (tensor, float(c)) if same_layout(tensor, product) else None


def minus_inf_fill(filled: Node) -> tuple[Node, Node] | None:
    """(t, dropped) where `filled` is t.masked_fill(dropped, -inf) (or torch.masked_fill) in t's dtype and shape;
    else None."""
    if filled.op not in ("call_function", "call_method") or filled.target not in MASKED_FILLS or filled.kwargs \
            or len(filled.args) != 3:
        return None
    tensor, dropped, value = filled.args
    if not (isinstance(tensor, Node) and isinstance(dropped, Node) and value == float("-inf")):
        return None
    mask = dropped.meta.get("example_value")
    if not (isinstance(mask, torch.Tensor) and mask.dtype == torch.bool) or not same_layout(tensor, filled):
        return None
    return tensor, dropped


def fp32_cast(cast: Node) -> Node | None:
    """t where `cast` is t.float() or t.to(torch.float32) (the dtype its only argument) of a 16-bit t; else None."""
    if cast.op != "call_method" or not cast.args or not isinstance(cast.args[0], Node):
        return None
    rest = (*cast.args[1:], *cast.kwargs.values())
    if not (cast.target == "float" and not rest) and not (cast.target == "to" and rest == (torch.float32,)):
        return None
    tensor = cast.args[0].meta.get("example_value")
    if not (isinstance(tensor, torch.Tensor) and tensor.dtype in (torch.bfloat16, torch.float16)):
        return None
    return cast.args[0]


def kept_positions(graph: torch.fx.Graph, dropped: Node, before: Node) -> Node:
    """A node of the bool tensor that is True where `dropped` is False: the operand of `~keep` (or logical_not,
    bitwise_not), else logical_not(dropped) put into the graph before `before`."""
    operand = dropped.args[0] if dropped.target in INVERTS and len(dropped.args) == 1 and not dropped.kwargs else None
    if isinstance(operand, Node) and getattr(operand.meta.get("example_value"), "dtype", None) == torch.bool:
        return operand
    with graph.inserting_before(before):
        kept = graph.call_function(torch.logical_not, (dropped,))
    kept.meta["example_value"] = torch.logical_not(dropped.meta["example_value"])
    return kept


def fold_one(graph: torch.fx.Graph, node: Node) -> bool:
    """Folds the op computing `node`'s x into the call, where it can (the module's rules); whether it did."""
    x, kwargs = node.args[0], node.kwargs
    if not isinstance(x, Node) or len(x.users) != 1:
        return False
    scale = kwargs.get("scale")
    if not (scale is None or isinstance(scale, (int, float))):
        return False
    rest, dropped = node.args[1:], None  # the call's arguments after x: dim and dtype, the rest keywords
    dtype = node.args[2] if len(node.args) > 2 else kwargs.get("dtype")
    if (factor := scalar_factor(x)) is not None:
        tensor, c = factor
        kwargs = {**kwargs, "scale": c * (1.0 if scale is None else float(scale))}
    elif (fill := minus_inf_fill(x)) is not None and kwargs.get("mask") is None and kwargs.get("bias") is None \
            and (scale is None or scale > 0):
        tensor, dropped = fill
        kwargs = {**kwargs, "mask": kept_positions(graph, dropped, node)}
    elif (tensor := fp32_cast(x)) is not None and dtype is None:
        rest, kwargs = node.args[1:2], {**kwargs, "dtype": torch.float32}  # dim kept; a dtype given as None dropped
    else:
        return False
    node.args, node.kwargs = (tensor, *rest), kwargs
    graph.erase_node(x)
    if dropped is not None and dropped.target in INVERTS and not dropped.users:  # `~keep`, read by nothing now
        graph.erase_node(dropped)
    return True


def fold_prologues(graph: torch.fx.Graph) -> int:
    """Folds into each call of ours in the graph what computed its x, as often as the module's rules allow (a
    masked_fill of a product: both); returns how many were folded."""
    from .dispatch import log_softmax, softmax

    folded = 0
    for node in list(graph.nodes):
        if node.op == "call_function" and node.target in (softmax, log_softmax) and node.args:
            while fold_one(graph, node):
                folded += 1
    return folded


def as_torch_ops(node: Node, gpu_faster_n: dict[int, int]) -> bool:
    """Whether a call of ours in dynamo's graph runs as torch ops: auto's variant, its x's example value on one of
    CHAIN_DEVICES, of a fixed shape (not a dynamic shape's symbols), its rows at most CHAIN_MAX_N wide, and x at
    most CHAIN_HOST_BOUND_BYTES or its rows at most gpu_faster_n[its element's bytes] wide."""
    x = node.args[0].meta.get("example_value") if isinstance(node.args[0], Node) else None
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    if node.kwargs.get("variant", "auto") != "auto" or not isinstance(x, torch.Tensor) or x.dim() == 0 \
            or x.device.type not in CHAIN_DEVICES or not isinstance(dim, int):
        return False
    if not all(isinstance(size, int) for size in x.shape):
        return False
    N = x.shape[dim]
    return N <= CHAIN_MAX_N and (x.numel() * x.element_size() <= CHAIN_HOST_BOUND_BYTES
                                 or N <= gpu_faster_n.get(x.element_size(), 0))


def tensor_sum(node: Node) -> bool:
    """Whether `node` is a sum or difference of two tensors (`x + b`, `torch.add(x, b)`, `x.sub(b)`), with no alpha
    or other keyword."""
    return node.op in ("call_function", "call_method") and node.target in SUMS and not node.kwargs \
        and len(node.args) == 2 and all(isinstance(arg, Node) and isinstance(arg.meta.get("example_value"),
                                                                             torch.Tensor) for arg in node.args)


def fuse_chains(graph: torch.fx.Graph, ours: tuple) -> int:
    """Gives the unfused variant (torch ops, which inductor fuses with what is around them) to each chain of our
    calls (a call whose x is another's output; both within as_torch_ops' rules with CHAIN_GPU_FASTER_N) and to each
    call whose x is a sum of two tensors used by nothing else (within them with SUM_GPU_FASTER_N): one kernel a
    direction where ours would be one a call after inductor's own (docs/perf-notes.md, sixty-first session).
    Returns how many calls it gave it."""
    given = set()
    for node in graph.nodes:
        x = node.args[0] if node.op == "call_function" and node.target in ours and node.args else None
        if not isinstance(x, Node):
            continue
        if x.op == "call_function" and x.target in ours:
            if as_torch_ops(x, CHAIN_GPU_FASTER_N) and as_torch_ops(node, CHAIN_GPU_FASTER_N):
                given.update((x, node))
        elif tensor_sum(x) and len(x.users) == 1 and as_torch_ops(node, SUM_GPU_FASTER_N):
            given.add(node)
    for node in given:
        node.kwargs = {**node.kwargs, "variant": "unfused"}
    return len(given)


def fold_and_fuse(graph: torch.fx.Graph) -> None:
    """The pass: fold_prologues, then fuse_chains (FUSE_CHAINS)."""
    from .dispatch import log_softmax, softmax

    fold_prologues(graph)
    if FUSE_CHAINS:
        fuse_chains(graph, (softmax, log_softmax))


@functools.cache
def install() -> bool:
    """fold_and_fuse as inductor's pre-grad custom pass, where no other pass is set (FOLD_PROLOGUES); whether it
    is."""
    if not FOLD_PROLOGUES:
        return False
    try:
        from torch._inductor import config
        from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files
    except ImportError:  # an inductor without custom passes that can be cached: left as it is
        return False

    class FoldPrologues(CustomGraphPass):
        def __call__(self, graph: torch.fx.Graph) -> None:
            fold_and_fuse(graph)

        def uuid(self) -> bytes:  # inductor's caches key on it: this file's text and the chains' rule as it is now
            rule = (FUSE_CHAINS, CHAIN_MAX_N, CHAIN_HOST_BOUND_BYTES, CHAIN_GPU_FASTER_N, SUM_GPU_FASTER_N,
                    CHAIN_DEVICES)
            return get_hash_for_files((__file__,)) + repr(rule).encode()

    if config.pre_grad_custom_pass is not None:
        return False
    config.pre_grad_custom_pass = FoldPrologues()
    return True
