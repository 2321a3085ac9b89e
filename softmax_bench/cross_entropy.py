"""`cross_entropy(logits, target, …)` and `CrossEntropyLoss`: the loss over a vocabulary, fused.

The forward reads the logits and writes one loss a row (kernels/cross_entropy.py); when the logits need a gradient,
the same launch writes it too (in their dtype), for a loss gradient of 1: the backward then hands it on, decided on
the device (the host never waits to learn which). For any other loss gradient it writes the gradient again from the
logits, which it keeps, in place: rounded once, where scaling the written one rounded twice. No M×V fp32
intermediate is made. The op is registered (`torch.ops.softmax_bench.cross_entropy`) with a fake
implementation and autograd: torch.compile traces it as one node, and torch.library.opcheck passes.
"""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor

from .dispatch import SoftmaxInputError, as_rows
from .kernels import DTYPES, interpreted

REDUCTIONS = ("mean", "sum", "none")


def check_arguments(logits, target, ignore_index, reduction, label_smoothing, z_loss, softcap, weight) -> None:
    """One-line errors for what the loss cannot take (torch's own messages are longer, or a wrong number)."""
    if not isinstance(logits, Tensor) or logits.dtype not in DTYPES.values():
        got = logits.dtype if isinstance(logits, Tensor) else type(logits).__name__
        raise TypeError(f"cross_entropy needs float32, bfloat16 or float16 logits, got {got}")
    if not isinstance(target, Tensor) or target.dtype not in (torch.int64, torch.int32):
        got = target.dtype if isinstance(target, Tensor) else type(target).__name__
        raise SoftmaxInputError(f"target must be class indices, an int64 or int32 tensor, got {got}; "
                                "class probabilities are not supported")
    if logits.dim() == 0 or tuple(target.shape) != tuple(logits.shape[:-1]):
        raise SoftmaxInputError(f"logits of shape {tuple(logits.shape)} need targets of shape "
                                f"{tuple(logits.shape[:-1])} (one a row), got {tuple(target.shape)}")
    if target.device != logits.device:
        raise SoftmaxInputError(f"target is on {target.device} and logits on {logits.device}; move one")
    if reduction not in REDUCTIONS:
        raise SoftmaxInputError(f"unknown reduction {reduction!r}; choose from {', '.join(REDUCTIONS)}")
    if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing < 1.0:
        raise SoftmaxInputError(f"label_smoothing must be in [0, 1), got {label_smoothing!r}")
    if not isinstance(z_loss, (int, float)) or z_loss < 0:
        raise SoftmaxInputError(f"z_loss must be a number ≥ 0, got {z_loss!r}")
    if softcap is not None and (not isinstance(softcap, (int, float)) or softcap <= 0):
        raise SoftmaxInputError(f"softcap must be a number > 0 or None, got {softcap!r}")
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != (logits.shape[-1],)
                               or not weight.is_floating_point()):
        raise SoftmaxInputError(f"weight must be a float tensor of one weight a class, shape ({logits.shape[-1]},)")
    if weight is not None and weight.device != logits.device:
        raise SoftmaxInputError(f"weight is on {weight.device} and logits on {logits.device}; move the weight")
    if logits.device.type != "cuda" and not torch.compiler.is_compiling() and not interpreted():
        raise SoftmaxInputError(f"cross_entropy is a Triton kernel and needs CUDA logits (got {logits.device}), or "
                                "TRITON_INTERPRET=1 set before softmax_bench is imported to run it on CPU")


def _divisor_given(divisor, reduction: str, device: torch.device) -> Optional[Tensor]:
    """cross_entropy's divisor as a 0-d fp32 tensor on the logits' device (a number filled there: no copy, no
    wait), or None."""
    if divisor is None:
        return None
    if reduction != "mean":
        raise SoftmaxInputError(f"divisor is what reduction='mean' divides by; with reduction={reduction!r} leave "
                                "it out")
    if isinstance(divisor, Tensor):
        if divisor.numel() != 1 or divisor.is_complex():
            raise SoftmaxInputError(f"divisor must be a number or a one-element tensor, got shape "
                                    f"{tuple(divisor.shape)}")
        return divisor.to(device=device, dtype=torch.float32).reshape(())
    if isinstance(divisor, bool) or not isinstance(divisor, (int, float)):
        raise SoftmaxInputError(f"divisor must be a number or a one-element tensor, got {type(divisor).__name__}")
    return torch.full((), float(divisor), dtype=torch.float32, device=device)


def _kernel_inputs(logits: Tensor, target: Tensor, weight: Optional[Tensor]
                   ) -> tuple[Tensor, Tensor, Optional[Tensor]]:
    """The logits as rows, the targets and the class weights as the kernels take them: they read a row's target at
    the row's index and a class's weight at the class's."""
    return as_rows(logits), target.reshape(-1).contiguous(), weight.contiguous() if weight is not None else None


def _loss_and_gradient(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, reduction: str,
                       label_smoothing: float, z_loss: float, softcap: Optional[float], with_grad: bool,
                       inplace: bool, divisor: Optional[Tensor] = None
                       ) -> tuple[Tensor, Tensor, Optional[Tensor], Optional[Tensor]]:
    """(the loss as reduced, each row's lse, the logits' gradient as rows or None, the loss's scale or None): the
    targets' kernel (the loss's scale, 1 / the mean's divisor; the targets' check), then the loss's and torch's sum;
    or for rows on a cluster the cluster's kernel and one program that finishes the rows and sums them (after the
    targets' kernel with the gradient, which needs its scale; else doing its work too; a prologue first for an
    in-place gradient).
    inplace: the gradient is written over the logits' rows (or a copy of them the kernel needed: then it is that
    copy). divisor: what `mean` divides by, when the caller says (a 0-d tensor), else the rows not ignored."""
    # imported when first run: importing a kernel module decorates its @triton.jit functions, which decides whether
    # they run compiled or interpreted, and `--interpret` sets that up after softmax_bench is imported
    from .kernels import cross_entropy as kernel

    rows, targets, weight = _kernel_inputs(logits, target, weight)
    loss, lse, dlogits, targets_ok, scale = kernel.launch(rows, targets, weight, ignore_index, label_smoothing,
                                                          z_loss, softcap, with_grad, inplace, reduction, divisor)
    if not rows.is_cuda:
        # a target outside [0, V) is an error, as torch's, never a number: on a GPU the kernels raise it (a
        # device-side assert, at the next synchronization, as torch's); the interpreter skips their asserts
        torch._assert_async(targets_ok, f"cross_entropy: a target is out of bounds: outside [0, {rows.shape[1]}) "
                                        "and not ignore_index")
    return (loss.view(target.shape) if reduction == "none" else loss), lse.view(target.shape), dlogits, scale


def _loss_lse_and_grad(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, reduction: str,
                       label_smoothing: float, z_loss: float, softcap: Optional[float],
                       with_grad: bool, divisor: Optional[Tensor] = None) -> tuple[Tensor, Tensor, Tensor]:
    loss, lse, dlogits, _ = _loss_and_gradient(logits, target, weight, ignore_index, reduction, label_smoothing,
                                               z_loss, softcap, with_grad, inplace=False, divisor=divisor)
    grad = dlogits.view(logits.shape) if dlogits is not None else logits.new_empty(0)
    return loss, lse, grad


_cross_entropy = torch.library.custom_op("softmax_bench::cross_entropy", mutates_args=())(_loss_lse_and_grad)


def _loss_lse_in_place(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int,
                       reduction: str, label_smoothing: float, z_loss: float,
                       softcap: Optional[float], divisor: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
    """The loss and lse, with the logits' gradient written over the logits."""
    loss, lse, dlogits, _ = _loss_and_gradient(logits, target, weight, ignore_index, reduction, label_smoothing,
                                               z_loss, softcap, with_grad=True, inplace=True, divisor=divisor)
    if dlogits.data_ptr() != logits.data_ptr():  # rows that as_rows had to copy: the gradient goes back
        logits.copy_(dlogits.view(logits.shape))
    return loss, lse


_cross_entropy_inplace = torch.library.custom_op("softmax_bench::cross_entropy_inplace_backward",
                                                 mutates_args=("logits",))(_loss_lse_in_place)


@_cross_entropy_inplace.register_fake
def _(logits, target, weight, ignore_index, reduction, label_smoothing, z_loss, softcap, divisor=None):
    loss_shape = target.shape if reduction == "none" else ()
    return (logits.new_empty(loss_shape, dtype=torch.float32),
            logits.new_empty(target.shape, dtype=torch.float32))


@_cross_entropy.register_fake
def _(logits, target, weight, ignore_index, reduction, label_smoothing, z_loss, softcap, with_grad, divisor=None):
    loss_shape = target.shape if reduction == "none" else ()
    return (logits.new_empty(loss_shape, dtype=torch.float32), logits.new_empty(target.shape, dtype=torch.float32),
            logits.new_empty(logits.shape if with_grad else (0,)))


def _recomputed(logits: Tensor, target: Tensor, weight: Optional[Tensor], lse: Tensor, dloss: Tensor,
                ignore_index: int, reduction: str, label_smoothing: float, z_loss: float, softcap: Optional[float],
                divisor: Optional[Tensor] = None, scale: Optional[Tensor] = None,
                out: Optional[Tensor] = None) -> Tensor:
    """The logits' gradient for the loss's gradient dloss, written from the logits and the forward's lse, rounded
    once (kernels/cross_entropy.gradient): into `out` (the forward's gradient, its rows whose dloss is 1 left), else
    a new tensor. scale: the forward's loss scale, else the targets' kernel finds it again."""
    from .kernels import cross_entropy as kernel  # imported when first run, as in _loss_and_gradient

    V = logits.shape[-1]
    rows, targets, weight = _kernel_inputs(logits, target, weight)
    if scale is None:
        scale = kernel.targets(targets, V, ignore_index, weight, divisor, reduction == "mean")[0]
    grad = kernel.gradient(rows, targets, weight, lse.reshape(-1), dloss, scale, ignore_index,
                           label_smoothing, z_loss, softcap, out.view(-1, V) if out is not None else None)
    return out if out is not None else grad.view(logits.shape)


@torch.library.custom_op("softmax_bench::cross_entropy_gradient", mutates_args=())
def _cross_entropy_gradient(logits: Tensor, target: Tensor, weight: Optional[Tensor], lse: Tensor, dloss: Tensor,
                            ignore_index: int, reduction: str, label_smoothing: float, z_loss: float,
                            softcap: Optional[float], divisor: Optional[Tensor] = None) -> Tensor:
    """_recomputed into a new tensor, as a traced backward takes it (torch.compile)."""
    return _recomputed(logits, target, weight, lse, dloss, ignore_index, reduction, label_smoothing, z_loss, softcap,
                       divisor)


@_cross_entropy_gradient.register_fake
def _(logits, target, weight, lse, dloss, ignore_index, reduction, label_smoothing, z_loss, softcap, divisor=None):
    return logits.new_empty(logits.shape)


def _setup_context(ctx, inputs, output, scale: Optional[Tensor] = None):
    logits, target, weight, ctx.ignore_index, ctx.reduction, ctx.smoothing, ctx.z_loss, ctx.softcap = inputs[:8]
    divisor = inputs[9]
    ctx.mark_non_differentiable(output[1], output[2])
    # lse and the gradient output are never differentiated: left None, not zeros of their shape (an M×V memset
    # each step, a quarter of its bytes)
    ctx.set_materialize_grads(False)
    # the logits kept for a loss gradient other than 1 (as torch's loss keeps its M×V log-probabilities)
    ctx.save_for_backward(output[2], logits, target, weight, output[1], divisor, scale)


def _on_device(dloss: Tensor) -> bool:
    """Whether the loss's gradient is a real tensor whose value the device may decide on: not a tracer's
    (torch.compile's AOT autograd traces the backward with functional and fake tensors, outside what is_compiling
    sees, and an in-place scale of a saved tensor there becomes a copy), and not one that needs a gradient itself."""
    return (type(dloss) is torch.Tensor and not torch.compiler.is_compiling() and not dloss.requires_grad)


def _written_again(ctx, dloss: Tensor) -> Tensor:
    """The logits' gradient for the loss's actual gradient dloss: the forward wrote it for a dloss of 1. In eager
    the first backward writes it again from the logits, in place, only where dloss is not exactly 1
    (`loss.backward()` of a mean or a sum hands the written one on with no pass), decided on the device as
    _scaled_as_written's scale is. Any other backward (a second through the same forward, retain_graph=True, which
    must not change what the first returned; a traced one) writes a new tensor."""
    grad, logits, target, weight, lse, divisor, scale = ctx.saved_tensors
    options = (ctx.ignore_index, ctx.reduction, ctx.smoothing, ctx.z_loss, ctx.softcap)
    if _on_device(dloss) and not getattr(ctx, "written_again", False):
        ctx.written_again = True
        return _recomputed(logits, target, weight, lse, dloss, *options, divisor, scale, out=grad)
    return torch.ops.softmax_bench.cross_entropy_gradient(logits, target, weight, lse, dloss, *options, divisor)


def _scaled_as_written(ctx, grad: Tensor, dloss: Tensor, reduction: str) -> Tensor:
    """inplace_backward's: the gradient the forward wrote over the logits (for a loss gradient of 1), scaled by the
    loss's actual gradient (rounded twice: the logits it could be written from again are gone).

    In eager the first backward scales it in place on the device, which skips the pass when the scale is exactly 1
    (`loss.backward()` of a mean or a sum) and waits for nothing: asking the host whether it is 1 cost a
    synchronization, and the GPU then idled while the host finished the backward (0.2–0.3 ms a step on the H200,
    docs/perf-notes.md). A second backward through the same forward (retain_graph=True) must not scale the
    buffer again, nor change what the first one returned: it scales out of place, once it has checked that the
    first left the buffer as the forward wrote it."""
    if _on_device(dloss):
        first = getattr(ctx, "first_dloss", None)
        if first is None:
            ctx.first_dloss = dloss
            from .kernels import cross_entropy as kernel  # imported when first run, as in _loss_and_gradient

            rows = grad if grad.dim() == 2 else grad.reshape(-1, grad.shape[-1])  # a view where the strides allow
            if rows.data_ptr() == grad.data_ptr():  # else a copy (leading dims that do not collapse): out of place
                kernel.scale_unless_one(rows, dloss)
                return grad
        else:  # a second backward through this forward: a synchronization, on this rare path only
            if grad.is_cuda and torch.cuda.is_current_stream_capturing():
                raise RuntimeError("softmax_bench.cross_entropy: a second backward through one forward cannot be "
                                   "captured in a CUDA graph; run the forward again for each backward")
            if not bool((first == 1).all()):
                raise RuntimeError("softmax_bench.cross_entropy: a second backward through one forward, after one "
                                   "whose loss gradient was not 1: with inplace_backward the first scaled the "
                                   "gradient the forward wrote over the logits. Run the forward again for each "
                                   "backward, or leave inplace_backward off")
    return (grad * (dloss if reduction != "none" else dloss.unsqueeze(-1))).to(grad.dtype)


def _differentiable_once(gradient: Tensor) -> Tensor:
    """The logits' gradient as a backward returns it; under create_graph=True (grad mode on in a backward), an
    error. The kernels write the gradient from no graph of the logits, and none of them is differentiable: a second
    derivative through it would leave this loss out without a word (a gradient penalty's gradient
    came out 0.016 from torch's: evidence/experiments/2026-12-05-session43/second-derivative.py). torch's
    DelayedError, raised only if the gradient is differentiated, would not be: the engine skips a node on no path
    to the inputs asked for."""
    if torch.is_grad_enabled() and not torch.compiler.is_compiling():
        raise RuntimeError("softmax_bench.cross_entropy is differentiable once: its gradient is written by the "
                           "forward, and a backward with create_graph=True would differentiate it again. For a second "
                           "derivative through the loss (a gradient penalty, a Hessian-vector product, MAML), use "
                           "torch.nn.functional.cross_entropy")
    return gradient


def _backward(ctx, dloss, dlse, dgrad):
    if dloss is None:  # the loss was not differentiated (grads are not materialized: see _setup_context)
        return (None,) * 10
    return (_differentiable_once(_written_again(ctx, dloss)),) + (None,) * 9


_cross_entropy.register_autograd(_backward, setup_context=_setup_context)


class _EagerAutograd(torch.autograd.Function):
    """The op's autograd formula (_setup_context, _backward) for an eager loss with a gradient, without the op:
    its custom_op call and autograd wrapper cost the host tens of µs a call (a step with the kernels stubbed, on a
    CPU: 109.5 µs against 54.3; evidence/experiments/2026-12-04-session36/grad-call-cost.txt). Written with ctx in
    forward, as softmax's EagerAutograd is: a setup_context makes Function.apply bind its arguments by
    inspect.signature."""

    @staticmethod
    def forward(ctx, *inputs):
        loss, lse, dlogits, scale = _loss_and_gradient(*inputs[:-1], inplace=False, divisor=inputs[-1])
        outputs = (loss, lse, dlogits.view(inputs[0].shape))
        _setup_context(ctx, inputs, outputs, scale)  # the scale kept: the backward needs no targets' kernel
        return outputs

    @staticmethod
    def backward(ctx, dloss, dlse, dgrad):
        return _backward(ctx, dloss, dlse, dgrad)


class _InplaceBackward(torch.autograd.Function):
    """The fused loss whose forward writes the logits' gradient over the logits (the op mutates them, as
    torch.library requires it to say); the backward hands that buffer on as the gradient."""

    @staticmethod
    def forward(ctx, logits, target, weight, ignore_index, reduction, label_smoothing, z_loss, softcap, divisor):
        arguments = (logits, target, weight, ignore_index, reduction, label_smoothing, z_loss, softcap, divisor)
        if torch.compiler.is_compiling():  # traced: the op, from which torch.compile learns that the logits change
            loss, lse = torch.ops.softmax_bench.cross_entropy_inplace_backward(*arguments)
        else:  # eager, past the op's dispatcher; the logits' version moved on as the op moves it, so that autograd
            # still refuses a backward that would read them (their producer's)
            loss, lse = _loss_lse_in_place(*arguments)
            torch.autograd.graph.increment_version(logits)
        ctx.reduction = reduction
        ctx.mark_non_differentiable(lse)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(logits)
        return loss, lse

    @staticmethod
    def backward(ctx, dloss, dlse):
        (grad,) = ctx.saved_tensors
        if dloss is None:
            return (None,) * 9
        return (_differentiable_once(_scaled_as_written(ctx, grad, dloss, ctx.reduction)),) + (None,) * 8


def cross_entropy(logits: Tensor, target: Tensor, *, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0, z_loss: float = 0.0, softcap: float | None = None,
                  weight: Tensor | None = None, return_lse: bool = False, inplace_backward: bool = False,
                  divisor: Tensor | float | None = None):
    """Cross-entropy of logits (…, V) against class indices (…) — torch.nn.functional.cross_entropy's loss, fused.

    The loss is fp32: a scalar for `mean` (over the rows not ignored, each counted by its target's weight, as torch)
    and `sum`, one a row for `none`; ignored rows (target == ignore_index) add 0. label_smoothing ε spreads ε of
    each row's target over the V classes, as torch's; z_loss adds z·lse² a row (PaLM's; lse is the row's
    log-sum-exp; a mean divides it as it divides the loss, by Σ w_t with class weights); softcap c caps the logits at c·tanh(x / c) first (Gemma 2's); weight: one float a class.
    Logits in fp32, bf16 or fp16, of any leading shape and row stride; targets int64 or int32. With return_lse,
    (loss, lse) — lse fp32, one a row, no gradient flows through it. divisor: what `mean` divides the summed loss
    by instead (a number or a 0-d tensor: transformers' num_items_in_batch), so that the gradient the forward
    writes is already the one `loss.backward()` needs; `sum(...) / divisor` would cost the backward a pass.

    When the logits need a gradient the forward writes it as it computes the loss, for a loss gradient of 1; the
    backward hands it on where the loss's gradient is exactly 1 (`loss.backward()` of a mean or a sum: no pass),
    decided on the device, so nothing waits for the GPU. For any other loss gradient it writes the gradient again
    from the logits (kept for it, as torch's loss keeps its log-probabilities) and the forward's lse, in place,
    rounded once (one pass, the bytes of scaling it; compiled and in a second backward, out of place).
    inplace_backward=True writes that gradient over the logits' own buffer instead of a new one (at 8k tokens of a
    128256 vocabulary, 2 GB of bf16 not allocated): after the forward the logits hold their gradient, so nothing
    else may read them (a leaf's .grad is a copy: autograd keeps a leaf's own data); with no logits left, its
    backward scales the written gradient (16-bit: rounded twice, within 1.5 ulp), once a forward unless the loss's
    gradient was 1.
    A target outside [0, V) that is not ignore_index raises an error, as torch's does. Empty logits (no rows, or no
    classes) give what torch's loss gives: they go through it.
    """
    check_arguments(logits, target, ignore_index, reduction, label_smoothing, z_loss, softcap, weight)
    if torch._C._are_functorch_transforms_active():
        raise SoftmaxInputError("softmax_bench.cross_entropy does not run under torch.func's transforms (grad, vmap, "
                                "...); use torch.nn.functional.cross_entropy there (softmax_bench.softmax and "
                                "log_softmax do run under them)")
    divisor = _divisor_given(divisor, reduction, logits.device)
    if logits.numel() == 0:
        loss, lse = _empty(logits, target, weight, ignore_index, reduction, label_smoothing, divisor)
        return (loss, lse) if return_lse else loss
    with_grad = torch.is_grad_enabled() and logits.requires_grad
    if with_grad and inplace_backward:
        loss, lse = _InplaceBackward.apply(logits, target, weight, int(ignore_index), reduction,
                                           float(label_smoothing), float(z_loss),
                                           None if softcap is None else float(softcap), divisor)
        return (loss, lse) if return_lse else loss
    arguments = (logits, target, weight, int(ignore_index), reduction, float(label_smoothing), float(z_loss),
                 None if softcap is None else float(softcap), with_grad)
    if torch.compiler.is_compiling():
        loss, lse, _ = _cross_entropy(*arguments, divisor)
    elif with_grad:  # the op's autograd formula without the op
        loss, lse, _ = _EagerAutograd.apply(*arguments, divisor)
    else:  # no autograd to register and nothing traced: past the dispatcher, as softmax's through_op (its µs a call)
        loss, lse, _, _ = _loss_and_gradient(*arguments, inplace=False, divisor=divisor)
    return (loss, lse) if return_lse else loss


def _empty(logits: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, reduction: str,
           label_smoothing: float, divisor: Optional[Tensor]) -> tuple[Tensor, Tensor]:
    """(loss, lse) of empty logits, as torch's loss gives them, through it. No rows: a mean of none is NaN (the
    kernels' sum of no rows gave 0). No classes (V = 0): a target not ignored is out of bounds, an error (the
    kernels read its logit past the end of the logits: a crash), an ignored row adds 0, and lse is -inf."""
    rows = logits.reshape(target.numel(), logits.shape[-1])
    loss = F.cross_entropy(rows, target.reshape(-1).long(), weight=weight, ignore_index=ignore_index,
                           reduction="sum" if divisor is not None else reduction,
                           label_smoothing=label_smoothing).float()
    if divisor is not None:
        loss = loss / divisor
    lse = torch.full(target.shape, float("-inf"), dtype=torch.float32, device=logits.device)
    return (loss.view(target.shape) if reduction == "none" else loss), lse


class CrossEntropyLoss(torch.nn.Module):
    """torch.nn.CrossEntropyLoss's arguments (weight, ignore_index, reduction, label_smoothing) and the fused
    loss's own (z_loss, softcap, inplace_backward); `loss_fn(logits, target)`."""

    def __init__(self, weight: Tensor | None = None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0, z_loss: float = 0.0, softcap: float | None = None,
                 inplace_backward: bool = False):
        super().__init__()
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing
        self.z_loss, self.softcap, self.inplace_backward = z_loss, softcap, inplace_backward

    def forward(self, logits: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(logits, target, ignore_index=self.ignore_index, reduction=self.reduction,
                             label_smoothing=self.label_smoothing, z_loss=self.z_loss, softcap=self.softcap,
                             weight=self.weight, inplace_backward=self.inplace_backward)


def causal_lm_loss(logits: Tensor, labels: Tensor, vocab_size: int, num_items_in_batch: Tensor | None = None,
                   ignore_index: int = -100, shift_labels: Tensor | None = None, **kwargs) -> Tensor:
    """transformers' causal-LM loss (ForCausalLMLoss: labels shifted by one, mean over the tokens not ignored, or
    the sum over num_items_in_batch) on the fused loss, which reads the logits in their own dtype instead of an
    fp32 copy of them. One line swaps it in: `model.loss_function = softmax_bench.causal_lm_loss`."""
    if shift_labels is None:
        shift_labels = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    logits, shift_labels = logits.reshape(-1, vocab_size), shift_labels.reshape(-1).to(logits.device)
    # over num_items_in_batch (the sum over it, as transformers'), divided in the forward: the backward then hands on
    # the gradient the forward wrote, where a sum divided after it would cost the backward a pass
    return cross_entropy(logits, shift_labels, ignore_index=ignore_index, divisor=num_items_in_batch)
