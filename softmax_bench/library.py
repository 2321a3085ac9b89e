"""softmax and log_softmax as registered torch ops — softmax_bench::softmax, softmax_bench::log_softmax — with
autograd registered on the op: one registration serves autograd, torch.compile (which traces the op as one node:
no graph break) and torch.library.opcheck. The backward saves y (the output), not x, and is an op of its own
(softmax_bench::softmax_backward, ::log_softmax_backward) so that the compiled backward calls the kernels too.

Each is a triton_op. With IN_GRAPH, when torch.compile traces it, the variant is chosen for the traced shape (N
specialized and guarded, as dynamic shapes guard any size a decision reads) and, where that variant's kernels can
be launched from inductor's own code (fused's plain Triton kernels; a torch variant's torch ops), they go into
the graph, so a compiled call runs none of softmax_bench's Python; IN_GRAPH is off until that passes on a GPU.
Every other traced call is the opaque op softmax_bench::<name>_opaque, decided each time it runs, from the real
tensor, as softmax_bench.softmax decides: cluster's kernels are Gluon, split's launch reads the compiled kernel's
resources, two_pass's and online's read x's pointer alignment, which a traced tensor does not have. Under
Triton's interpreter every traced call is opaque.

softmax_bench.softmax goes through these ops only while compiling or when x needs a gradient; a plain eager call
runs the kernels directly (the dispatcher costs tens of µs a call). Either way a call like a recorded one replays
its launches (softmax_bench.replay): the ops' implementation is the eager call's.
"""

from __future__ import annotations

import functools
from typing import Optional

import torch
from torch import Tensor
from torch._subclasses.fake_tensor import is_fake

from . import kernels
from .auto_table import table_form
from .dispatch import (_resolve, backward_for, check_dim, check_tensor, like_output, replayed_or_forward,
                       softmax_backward, softmax_forward)

IN_GRAPH_FORWARDS = frozenset({"fused", "eager", "unfused"})  # whose kernels a compiled graph launches itself
IN_GRAPH_BACKWARDS = frozenset({"fused", "eager"})
# Off: every traced call is the opaque op. On the H200 under torch 2.11 and Triton 3.8 (eighteenth session,
# evidence/experiments/2026-12-02-session18/e-, f-in-graph), with every argument named (kernels.traced_arguments),
# 17 of the compile tests passed with it on and 2 failed: a log_softmax's graph, on a callee under another name
# and then on the scale inductor types fp64 (both fixed since, not yet run on a GPU); a keep-mask's forward was
# traced as the opaque op. That call is decided in-graph, but inductor cannot lower the bool mask's view as uint8
# (dispatch.fusion_for; "LoweringException: TypeError: torch.bool is not supported by torch.iinfo" with x needing
# no gradient: nineteenth session, evidence/experiments/2026-12-02-session19/in-graph-mask.py). torch 2.11's
# identify_mutated_tensors fails on Triton 3.8 ("Function argument index out of range"), so inductor takes every
# input of our kernel as mutated; and compiled_op's host µs, 78.5 a call, stayed 2.2× torch_compile's (35.0).
IN_GRAPH = False


def in_graph(x: Tensor, dim: int, variant: str, log: bool, backward: bool = False, form: str = "softmax") -> bool:
    """Whether a traced call's kernels go into the graph: the variant chosen for x's row width (specialized) and
    the call's form (auto_table.table_form) is one of IN_GRAPH_FORWARDS (its backward one of
    IN_GRAPH_BACKWARDS)."""
    if not IN_GRAPH or kernels.interpreted():
        return False
    N = int(x.shape[dim]) if x.dim() else 1
    chosen = _resolve(variant, N, x.dtype, x.device, False, log, form)
    if backward:
        return backward_for(chosen, N, x.dtype).name in IN_GRAPH_BACKWARDS
    return chosen.name in IN_GRAPH_FORWARDS


def triton_op(name: str, fn):
    """torch.library.triton_op of fn, given as a functools.partial with its schema: triton_op reads the source of
    fn to list the Triton kernels it launches (for AOTAutograd's cache key), and that walk imported inductor and
    took ~1.6 s at every start of a process that imports softmax_bench (a sweep under --interpret: 3.7 → 5.3 s);
    with no source to read, it lists none. While IN_GRAPH is off no kernel of ours is in a graph. torch 2.11's
    triton_op infers the schema from what it is given whatever schema it gets, and a partial has no globals to
    infer it from (AttributeError): there, fn itself, and the walk's cost."""
    schema = torch.library.infer_schema(fn, mutates_args=())
    try:
        return torch.library.triton_op(name, functools.partial(fn), mutates_args=(), schema=schema)
    except AttributeError:
        return torch.library.triton_op(name, fn, mutates_args=())


def _register(name: str, log: bool) -> None:
    """The op softmax_bench::<name> (log: log_softmax), its backward op, their opaque forms and the autograd
    formula that joins them."""

    @torch.library.custom_op(f"softmax_bench::{name}_opaque", mutates_args=())
    def opaque(x: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
               variant: str, out_dtype: Optional[torch.dtype] = None, bias: Optional[Tensor] = None) -> Tensor:
        return replayed_or_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)

    @opaque.register_fake
    def _(x, dim, scale, mask, causal, variant, out_dtype=None, bias=None):
        check_tensor(x, variant)
        check_dim(x, dim)
        return like_output(x, dim, out_dtype)

    def forward(x: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                variant: str, out_dtype: Optional[torch.dtype] = None, bias: Optional[Tensor] = None) -> Tensor:
        if not is_fake(x):  # run, not traced: a call like a recorded one replays its launches (softmax_bench.replay)
            return replayed_or_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)
        check_tensor(x, variant)
        check_dim(x, dim)
        if not in_graph(x, dim, variant, log, form=table_form(mask, causal, bias)):
            return opaque(x, dim, scale, mask, causal, variant, out_dtype, bias)
        with kernels.launches_traced():
            return softmax_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)

    @torch.library.custom_op(f"softmax_bench::{name}_backward_opaque", mutates_args=())
    def backward_opaque(y: Tensor, dy: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor],
                        causal: bool, variant: str) -> Tensor:
        return softmax_backward(y, dy, dim, scale, mask, causal, variant, log)

    @backward_opaque.register_fake
    def _(y, dy, dim, scale, mask, causal, variant):
        return like_output(y, dim)

    def backward_op(y: Tensor, dy: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                    variant: str) -> Tensor:
        if not is_fake(y):
            return softmax_backward(y, dy, dim, scale, mask, causal, variant, log)
        if not in_graph(y, dim, variant, log, backward=True):
            return backward_opaque(y, dy, dim, scale, mask, causal, variant)
        with kernels.launches_traced():
            return softmax_backward(y, dy, dim, scale, mask, causal, variant, log)

    forward = triton_op(f"softmax_bench::{name}", forward)
    backward_op = triton_op(f"softmax_bench::{name}_backward", backward_op)

    def setup_context(ctx, inputs, output):
        x, ctx.dim, ctx.scale, mask, ctx.causal, ctx.variant, _, bias = inputs
        ctx.x_dtype = x.dtype
        ctx.bias_layout = None if bias is None else (bias.shape, bias.dtype)
        ctx.save_for_backward(output, mask)

    def backward(ctx, dy):
        y, mask = ctx.saved_tensors
        if ctx.bias_layout is None or not ctx.needs_input_grad[7]:
            dx = backward_op(y, dy, ctx.dim, ctx.scale, mask, ctx.causal, ctx.variant)
            dbias = None
        else:
            # the gradient of x · scale + bias: dbias is it summed over the dims the bias is broadcast over, and
            # dx it times the scale (one more pass, only where the bias needs a gradient)
            dz = backward_op(y, dy, ctx.dim, None, mask, ctx.causal, ctx.variant)
            shape, dtype = ctx.bias_layout
            dbias = dz.sum_to_size(shape).to(dtype)
            dx = dz if ctx.scale is None or ctx.scale == 1 else dz * ctx.scale
        # y in fp32 from 16-bit x (out_dtype): dx computed in fp32, rounded once to x's dtype, as torch's is
        return dx.to(ctx.x_dtype), None, None, None, None, None, None, dbias

    forward.register_autograd(backward, setup_context=setup_context)


_register("softmax", log=False)
_register("log_softmax", log=True)
