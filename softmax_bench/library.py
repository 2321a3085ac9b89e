"""softmax and log_softmax as registered torch ops — softmax_bench::softmax, softmax_bench::log_softmax — with a
fake implementation and autograd registered on the op: one registration serves autograd, torch.compile (which
traces the op as one node: no graph break) and torch.library.opcheck.

The ops are opaque to the compiler (custom_op, not triton_op): the variant and its launch settings are decided
each time the op runs, from the real tensor, as softmax_bench.softmax decides them, and never baked into a graph
traced for other shapes. The backward saves y (the output), not x, and is an op of its own
(softmax_bench::softmax_backward, ::log_softmax_backward) so that the compiled backward calls the kernels too.

softmax_bench.softmax goes through these ops only while compiling or when x needs a gradient; a plain eager call
runs the kernels directly (the dispatcher costs tens of µs a call). Either way a call like a recorded one replays
its launches (softmax_bench.replay): the ops' implementation is the eager call's.
"""

from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from .dispatch import check_dim, check_tensor, like_output, replayed_or_forward, softmax_backward


def _register(name: str, log: bool) -> None:
    """The op softmax_bench::<name> (log: log_softmax), its backward op, their fake implementations and the
    autograd formula that joins them."""

    @torch.library.custom_op(f"softmax_bench::{name}", mutates_args=())
    def forward(x: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                variant: str, out_dtype: Optional[torch.dtype] = None, bias: Optional[Tensor] = None) -> Tensor:
        # a call like a recorded one replays its launches (softmax_bench.replay), compiled or with a gradient too
        return replayed_or_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)

    @forward.register_fake
    def _(x, dim, scale, mask, causal, variant, out_dtype=None, bias=None):
        check_tensor(x, variant)
        check_dim(x, dim)
        return like_output(x, dim, out_dtype)

    @torch.library.custom_op(f"softmax_bench::{name}_backward", mutates_args=())
    def backward_op(y: Tensor, dy: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                    variant: str) -> Tensor:
        return softmax_backward(y, dy, dim, scale, mask, causal, variant, log)

    @backward_op.register_fake
    def _(y, dy, dim, scale, mask, causal, variant):
        return like_output(y, dim)

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
