"""softmax and log_softmax as registered torch ops — softmax_bench::softmax, softmax_bench::log_softmax — with
autograd registered on the op: one registration serves autograd, torch.compile (which traces the op as one node:
no graph break) and torch.library.opcheck. The backward saves y (the output), not x, and is an op of its own
(softmax_bench::softmax_backward, ::log_softmax_backward) so that the compiled backward calls the kernels too.

Each is a triton_op. With IN_GRAPH (on by default), when torch.compile traces a call whose row width is a number
(not a dynamic shape's symbol), the variant is chosen for it and, where that variant's kernels can be launched
from inductor's own code (fused's plain Triton kernels; a torch variant's torch ops), they go into the graph, so
a compiled call runs none of softmax_bench's Python. Every other traced call is the opaque op
softmax_bench::<name>_opaque, decided each time it runs, from the real tensor, as softmax_bench.softmax decides:
cluster's kernels are Gluon, split's launch reads the compiled kernel's resources, two_pass's and online's read x's
pointer alignment, which a traced tensor does not have. Under Triton's interpreter every traced call of a Triton
variant is opaque.

softmax_bench.softmax goes through these ops only while compiling. An eager call runs the kernels directly (the
dispatcher and torch.library's autograd wrapper cost ~30 µs a call); when x or the bias needs a gradient it applies
the ops' autograd formula as a torch.autograd.Function (EagerAutograd), which runs the same implementations. Either
way a call like a recorded one replays its launches (softmax_bench.replay): the ops' implementation is the eager
call's. Under torch.func's transforms it applies TransformedAutograd, the same formula as they need it written.
"""

from __future__ import annotations

import functools
import gc
import os
import re
import sys
from typing import Optional

import torch
from torch import Tensor
from torch.fx.experimental.symbolic_shapes import is_concrete_int

from . import kernels
from .auto_table import table_form
from .dispatch import (EAGER_AUTOGRAD, TRANSFORMED_AUTOGRAD, _resolve, backward_for, check_dim, check_tensor,
                       like_output, replayed_or_backward, replayed_or_forward, softmax_backward, softmax_forward)

IN_GRAPH_FORWARDS = frozenset({"fused", "eager", "unfused"})  # whose kernels a compiled graph launches itself
IN_GRAPH_BACKWARDS = frozenset({"fused", "eager"})
# On (SOFTMAX_BENCH_IN_GRAPH=0 turns it off: every traced call the opaque op). On the H200 under torch 2.11 and
# Triton 3.8 (twenty-ninth session, evidence/experiments/2026-12-04-session29/in-graph), with the kernels' writes
# declared (KERNEL_WRITES) and the keep-mask given to the kernel as the bool it is: compiled_op's host µs a call
# 143 → 76 (torch_compile's 58 and 44 in the same processes), a compiled training step's 1576 → 831 (torch's
# 580, 494). The GPU's compile tests pass with it on (the backward part: 206 passed), since a dynamic width is
# the opaque op (in_graph): a model that saw 16 widths had passed dynamo's 8 recompiles.
IN_GRAPH = os.environ.get("SOFTMAX_BENCH_IN_GRAPH", "1") != "0"


# The tensors each kernel of ours in a graph writes, by its pointer argument. torch.compile's functionalization
# copies every tensor a user kernel writes before the launch (the graph's inputs may not change), and learns which
# from the kernel's TTIR; torch 2.11's reading of it fails under Triton 3.8 ("Function argument index out of
# range") and then takes every tensor argument as written: x, the mask and the bias copied at every call (and x
# again for each unused pointer the launch gives it). Declared here, read instead (declare_kernel_writes).
KERNEL_WRITES = {"fused_rows_kernel": ("y_ptr",), "fused_backward_kernel": ("dx_ptr",)}


@functools.cache
def declare_kernel_writes() -> None:
    """torch.compile learns what our kernels write from KERNEL_WRITES, other kernels as before: wraps
    triton_kernel_wrap's get_mutated_tensors (what functionalization copies) and, where it exists (torch 2.11 has
    it, 2.14 does not), identify_mutated_tensors (what inductor's node of the kernel says it mutates). And lists
    the kernels under our ops for AOTAutograd's cache, whose key holds the source of an op's kernels (triton_op
    here lists none): a graph cached before the kernels or IN_GRAPH changed is not served after."""
    from torch._higher_order_ops import triton_kernel_wrap as wrap
    from torch._library import triton as library_triton

    from .kernels import fused, fused_backward

    for name in ("softmax", "log_softmax"):
        library_triton.triton_ops_to_kernels[f"softmax_bench::{name}"] = [fused.fused_rows_kernel]
        library_triton.triton_ops_to_kernels[f"softmax_bench::{name}_backward"] = [
            fused_backward.fused_backward_kernel]

    def written(kernel, kwargs) -> list[str] | None:
        names = KERNEL_WRITES.get(getattr(getattr(kernel, "fn", None), "__name__", None))
        return None if names is None else [name for name in names if name in kwargs]

    get_mutated = getattr(wrap, "get_mutated_tensors", None)
    if get_mutated is not None:
        @functools.wraps(get_mutated)
        def get_mutated_tensors(kernel_idx, constant_args_idx, kwargs, *rest):
            declared = written(wrap.kernel_side_table.get_kernel(kernel_idx), kwargs)
            return get_mutated(kernel_idx, constant_args_idx, kwargs, *rest) if declared is None else declared

        wrap.get_mutated_tensors = get_mutated_tensors
    identify = getattr(wrap, "identify_mutated_tensors", None)
    if identify is not None:
        @functools.wraps(identify)
        def identify_mutated_tensors(kernel, kwargs, *rest):
            declared = written(kernel, kwargs)
            return identify(kernel, kwargs, *rest) if declared is None else declared

        wrap.identify_mutated_tensors = identify_mutated_tensors


# On (SOFTMAX_BENCH_STATIC_LAUNCH=0 turns it off): inductor launches our kernels in a graph through its static
# launcher, as it launches its own (launch_ours_statically). On an H100 (torch 2.11, Triton 3.8, fiftieth session)
# Inductor's own setting for every user kernel of a process did that and took compiled_op's host µs a call from
# 1.14–1.16× torch.compile of the eager code's to 0.99–1.01×.
STATIC_LAUNCH = os.environ.get("SOFTMAX_BENCH_STATIC_LAUNCH", "1") != "0"


def kernel_name(fn) -> str | None:
    """A Triton kernel's def name, from its JITFunction (or an object that wraps one as .fn), without the suffix
    inductor's unique_user_kernel_names gives a kernel it copies into a graph (fused_rows_kernel_0)."""
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", None)
    return None if name is None else re.sub(r"_\d+$", "", name)


def static_results(autotuner) -> list:
    """An inductor kernel's compile results (CachingAutotuner.compile_results), those of one of our kernels in a
    graph (KERNEL_WRITES's) made static where inductor's own check allows it under its setting for user kernels
    (StaticTritonCompileResult.can_statically_launch with static_launch_user_defined_triton_kernels on: the
    cubin on disk, no launch hooks, no launch attributes). A result it refuses, or one whose check fails, is kept:
    Triton's launcher launches it as before."""
    from torch._inductor import config
    from torch._inductor.runtime import triton_heuristics as heuristics

    if kernel_name(autotuner.fn) not in KERNEL_WRITES:
        return autotuner.compile_results
    results = []
    for result in autotuner.compile_results:
        static = None
        if isinstance(result, heuristics.TritonCompileResult):
            try:
                with config.patch(static_launch_user_defined_triton_kernels=True):
                    static = heuristics.StaticTritonCompileResult.can_statically_launch(
                        result.kernel, autotuner.inductor_meta, autotuner.triton_meta, autotuner.heuristic_type)
            except Exception:  # an inductor or a kernel this was not written against: Triton's launcher
                static = None
        results.append(result if static is None else heuristics.StaticTritonCompileResult(
            static, result.config, result.compile_meta, result.inductor_meta))
    return results


def static_first(make_launchers):
    """CachingAutotuner._make_launchers, our kernels' compile results made static first (static_results); where
    the static launchers will not load, made again from the results as they were (Triton's launcher)."""

    @functools.wraps(make_launchers)
    def _make_launchers(self):
        if STATIC_LAUNCH and not self.launchers:
            given = self.compile_results
            self.compile_results = static_results(self)
            if self.compile_results is not given:
                try:
                    return make_launchers(self)
                except Exception:  # a static launcher that would not load: Triton's, as before
                    self.launchers, self.compile_results = [], given
        return make_launchers(self)

    return _make_launchers


@functools.cache
def launch_ours_statically() -> None:
    """Inductor launches our kernels in a graph through its static launcher (a launch from C with the arguments as
    they come), not through Triton's (its launch_metadata, hooks and argument binding in Python): it does so for its
    own kernels, and for user kernels only under its setting static_launch_user_defined_triton_kernels, which is
    the whole process's (every project's kernels) and read where a kernel is compiled, in inductor's compile
    workers, which only the environment reaches. So this process, where a compiled kernel's launchers are made
    (CachingAutotuner._make_launchers, after a worker's compile or a cache's load), makes our kernels' compile
    results static first (static_first); other kernels are left as they are."""
    from torch._inductor.runtime import triton_heuristics as heuristics

    heuristics.CachingAutotuner._make_launchers = static_first(heuristics.CachingAutotuner._make_launchers)


def our_autotuners() -> list:
    """The kernels of ours that this process's compiled graphs launch (inductor's CachingAutotuners, with their
    launchers made): a launcher with `_is_static` is inductor's static one, any other Triton's."""
    heuristics = sys.modules.get("torch._inductor.runtime.triton_heuristics")
    if heuristics is None:  # no graph compiled here, and not worth inductor's import to say so
        return []
    # type(), not isinstance: isinstance of a weak proxy whose object is gone raises ReferenceError
    return [tuner for tuner in gc.get_objects() if issubclass(type(tuner), heuristics.CachingAutotuner)
            and tuner.launchers and kernel_name(tuner.fn) in KERNEL_WRITES]


def in_graph(x: Tensor, dim: int, variant: str, log: bool, backward: bool = False, form: str = "softmax") -> bool:
    """Whether a traced call's kernels go into the graph: x's row width is a number, not a symbol of a dynamic
    shape (deciding would specialize it: a graph for each width, past dynamo's 8 recompiles in a model that
    sees many), and the variant chosen for it and the call's form (auto_table.table_form) is one of
    IN_GRAPH_FORWARDS (its backward one of IN_GRAPH_BACKWARDS), and not a Triton one under Triton's interpreter."""
    if not IN_GRAPH:
        return False
    N = x.shape[dim] if x.dim() else 1
    if not is_concrete_int(N):
        return False
    declare_kernel_writes()
    launch_ours_statically()
    N = int(N)
    chosen = _resolve(variant, N, x.dtype, x.device, False, log, form)
    if backward:
        chosen = backward_for(chosen, N, x.dtype)
    in_graph_ones = IN_GRAPH_BACKWARDS if backward else IN_GRAPH_FORWARDS
    return chosen.name in in_graph_ones and not (chosen.triton and kernels.interpreted())


def triton_op(name: str, fn):
    """torch.library.triton_op of fn, given as a functools.partial with its schema: triton_op reads the source of
    fn to list the Triton kernels it launches (for AOTAutograd's cache key), and that walk imported inductor and
    took ~1.6 s at every start of a process that imports softmax_bench (a sweep under --interpret: 3.7 → 5.3 s);
    with no source to read, it lists none (declare_kernel_writes lists fused's once a call is traced with its
    kernel in the graph). torch 2.11's triton_op infers the schema from what it is given whatever schema it gets,
    and a partial has no globals to infer it from (AttributeError): there, fn itself, and the walk's cost."""
    schema = torch.library.infer_schema(fn, mutates_args=())
    try:
        return torch.library.triton_op(name, functools.partial(fn), mutates_args=(), schema=schema)
    except AttributeError:
        return torch.library.triton_op(name, fn, mutates_args=())


# The opaque ops, defined on a Library of their own rather than by torch.library.custom_op: a custom op's call
# runs its autograd kernel, a redispatch and an aliasing check of its output in Python: 9.1–9.5 µs a call against
# 4.0–4.1 for the same op defined so, torch.empty_like alone 0.84–0.88 (an op that allocates its output and
# returns it, on a CPU; evidence/experiments/2026-12-04-session29/op-dispatch.py). They are called only from a
# compiled graph, where autograd has been traced already.
OPAQUE_OPS = torch.library.Library("softmax_bench", "FRAGMENT")


def opaque_op(name: str, schema: str, forward, fake):
    """The op softmax_bench::<name> of `schema`, running forward on any device and fake while traced."""
    OPAQUE_OPS.define(name + schema)
    OPAQUE_OPS.impl(name, forward, "CompositeExplicitAutograd")
    torch.library.register_fake(f"softmax_bench::{name}", fake, lib=OPAQUE_OPS)
    return getattr(torch.ops.softmax_bench, name).default


def _register(name: str, log: bool) -> None:
    """The op softmax_bench::<name> (log: log_softmax), its backward op, their opaque forms and the autograd
    formula that joins them."""

    def opaque_forward(x, dim, scale, mask, causal, variant, out_dtype=None, bias=None):
        return replayed_or_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)

    def opaque_fake(x, dim, scale, mask, causal, variant, out_dtype=None, bias=None):
        check_tensor(x, variant)
        check_dim(x, dim)
        return like_output(x, out_dtype)

    opaque = opaque_op(f"{name}_opaque", "(Tensor x, int dim, float? scale, Tensor? mask, bool causal, str variant, "
                       "ScalarType? out_dtype=None, Tensor? bias=None) -> Tensor", opaque_forward, opaque_fake)

    def run_forward(x: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                    variant: str, out_dtype: Optional[torch.dtype] = None, bias: Optional[Tensor] = None) -> Tensor:
        # run, not traced: a call like a recorded one replays its launches (softmax_bench.replay)
        if not kernels.fake(x):
            return replayed_or_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)
        check_tensor(x, variant)
        check_dim(x, dim)
        if not in_graph(x, dim, variant, log, form=table_form(mask, causal, bias)):
            return opaque(x, dim, scale, mask, causal, variant, out_dtype, bias)
        with kernels.launches_traced():
            return softmax_forward(x, dim, scale, mask, causal, variant, log, out_dtype=out_dtype, bias=bias)

    backward_opaque = opaque_op(
        f"{name}_backward_opaque", "(Tensor y, Tensor dy, int dim, float? scale, Tensor? mask, bool causal, "
        "str variant) -> Tensor",
        lambda y, dy, dim, scale, mask, causal, variant: replayed_or_backward(y, dy, dim, scale, mask, causal,
                                                                              variant, log),
        lambda y, dy, dim, scale, mask, causal, variant: like_output(y))

    def run_backward(y: Tensor, dy: Tensor, dim: int, scale: Optional[float], mask: Optional[Tensor], causal: bool,
                     variant: str) -> Tensor:
        if not kernels.fake(y):
            return replayed_or_backward(y, dy, dim, scale, mask, causal, variant, log)
        if not in_graph(y, dim, variant, log, backward=True):
            return backward_opaque(y, dy, dim, scale, mask, causal, variant)
        with kernels.launches_traced():
            return softmax_backward(y, dy, dim, scale, mask, causal, variant, log)

    forward_op = triton_op(f"softmax_bench::{name}", run_forward)
    backward_op = triton_op(f"softmax_bench::{name}_backward", run_backward)

    def save(ctx, inputs, output):
        x, ctx.dim, ctx.scale, mask, ctx.causal, ctx.variant, _, bias = inputs
        ctx.x_dtype = x.dtype
        ctx.bias_layout = None if bias is None else (bias.shape, bias.dtype)
        ctx.save_for_backward(output, mask)

    def gradient(ctx, dy, backward):
        """The gradients of x and the bias, the backward's kernels run by backward(y, dy, dim, scale, mask,
        causal, variant)."""
        y, mask = ctx.saved_tensors
        if ctx.bias_layout is None or not ctx.needs_input_grad[-1]:  # the bias is the last input, op's or Function's
            dx = backward(y, dy, ctx.dim, ctx.scale, mask, ctx.causal, ctx.variant)
            dbias = None
        else:
            # the gradient of x · scale + bias: dbias is it summed over the dims the bias is broadcast over, and
            # dx it times the scale (one more pass, only where the bias needs a gradient)
            dz = backward(y, dy, ctx.dim, None, mask, ctx.causal, ctx.variant)
            shape, dtype = ctx.bias_layout
            dbias = dz.sum_to_size(shape).to(dtype)
            dx = dz if ctx.scale is None or ctx.scale == 1 else dz * ctx.scale
        # y in fp32 from 16-bit x (out_dtype): dx computed in fp32, rounded once to x's dtype, as torch's is
        if dx.dtype != ctx.x_dtype:
            dx = dx.to(ctx.x_dtype)
        return dx, None, None, None, None, None, None, dbias

    forward_op.register_autograd(lambda ctx, dy: gradient(ctx, dy, backward_op), setup_context=save)

    class EagerAutograd(torch.autograd.Function):
        """The op's autograd formula for an eager call with a gradient, without the op: torch.library's autograd
        wrapper and the dispatcher cost such a call's forward 33.6 µs on a CPU against 7.1 so, and its backward as
        much again (evidence/experiments/2026-12-04-session36/grad-call-cost.txt). Differentiable twice (a backward
        with create_graph=True runs torch's ops) and in forward mode (jvp: torch.autograd.forward_ad)."""

        @staticmethod
        def forward(ctx, x, options, bias):  # ctx given: with setup_context, Function.apply binds the arguments by
            # inspect.signature at each call (34.7 µs a call with it and is_fake, 7.0 with neither). The arguments
            # that take no gradient come as one tuple, (dim, scale, mask, causal, variant, out_dtype): apply costs
            # ~0.1 µs an argument (CPU)
            dim, scale, mask, causal, variant, out_dtype = options
            y = run_forward(x, dim, scale, mask, causal, variant, out_dtype, bias)
            save(ctx, (x, dim, scale, mask, causal, variant, out_dtype, bias), y)
            ctx.save_for_forward(y)
            return y

        @staticmethod
        def backward(ctx, dy):
            if torch.is_grad_enabled():  # create_graph=True: torch's ops, which autograd differentiates again (the
                # saved y is this call's output, so a second gradient comes back through this backward). A dy that
                # a vmap batched takes them too, in replayed_or_backward: it has no storage for a kernel to read
                return function_gradient(ctx, dy, torch_ops_backward)
            # a plain backward, which the engine runs with grad mode off: without once_differentiable's wrapper (its
            # no_grad, its checks) an eager step costs 35 µs on a CPU, not 41 (thirty-seventh session, grad-call-cost)
            return function_gradient(ctx, dy, run_backward)

        @staticmethod
        def jvp(ctx, x_tangent, _, bias_tangent):
            return output_tangent(ctx, x_tangent, bias_tangent, log)

    def function_gradient(ctx, dy, backward):
        """gradient's (x's, none for the options, the bias's), as the Functions' inputs (x, options, bias) take it."""
        grads = gradient(ctx, dy, backward)
        return grads[0], None, grads[7]

    EAGER_AUTOGRAD[log] = EagerAutograd

    def torch_ops_backward(y, dy, dim, scale, mask, causal, variant):
        return softmax_backward(y, dy, dim, scale, mask, causal, "eager", log)

    class TransformedAutograd(torch.autograd.Function):
        """The formula under torch.func's transforms (grad, vjp, vmap, jacrev), which need a setup_context and a
        vmap rule: the forward runs the kernels, a batch dim moved first (softmax's rows are rows whatever their
        leading dims); the backward runs torch's ops (the eager variant's), which the transforms can batch and
        differentiate again."""

        @staticmethod
        def forward(x, options, bias):
            dim, scale, mask, causal, variant, out_dtype = options
            return run_forward(x, dim, scale, mask, causal, variant, out_dtype, bias)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, options, bias = inputs
            save(ctx, (x, *options, bias), output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, dy):
            return function_gradient(ctx, dy, torch_ops_backward)

        @staticmethod
        def jvp(ctx, x_tangent, _, bias_tangent):
            return output_tangent(ctx, x_tangent, bias_tangent, log)

        @staticmethod
        def vmap(info, in_dims, x, options, bias):
            # every batched tensor with its batch dim first: x's; a batched mask's or bias's then reads as a
            # broadcast one of x's rank (an unbatched one broadcasts over the batch as it is)
            x_dim, (_, _, mask_dim, *_), bias_dim = in_dims
            x = x.movedim(x_dim, 0) if x_dim is not None else x.expand(info.batch_size, *x.shape)
            dim, scale, mask, causal, variant, out_dtype = options
            dim = dim + 1 if dim >= 0 else dim  # x's dims, counted after the batch dim
            mask, bias = (batch_first(t, t_dim, x.dim()) for t, t_dim in ((mask, mask_dim), (bias, bias_dim)))
            return TransformedAutograd.apply(x, (dim, scale, mask, causal, variant, out_dtype), bias), 0

    TRANSFORMED_AUTOGRAD[log] = TransformedAutograd


def output_tangent(ctx, x_tangent: Optional[Tensor], bias_tangent: Optional[Tensor], log: bool) -> Tensor:
    """The forward-mode derivative of y (jvp) for tangents of x and the bias, from the saved y, as torch's softmax
    and log_softmax derive theirs, of z = x · scale + bias with the masked positions filled: z's tangent is 0 there.
    A masked position is one whose y is 0 (its log's −inf): a kept one that underflowed to 0 adds y · ż = 0 either
    way. In fp32 for 16-bit y, in y's dtype out; torch's ops, which autograd differentiates (a backward of it)."""
    (y,) = ctx.saved_tensors
    out_dtype, dtype = y.dtype, torch.promote_types(y.dtype, torch.float32)
    z_tangent = torch.zeros((), dtype=dtype, device=y.device)
    if x_tangent is not None:
        z_tangent = x_tangent.to(dtype) if ctx.scale is None else x_tangent.to(dtype) * ctx.scale
    if bias_tangent is not None:
        z_tangent = z_tangent + bias_tangent.to(dtype)
    y = y.to(dtype)
    masked = y == (float("-inf") if log else 0.0)
    z_tangent = torch.where(masked, 0.0, z_tangent)  # ż broadcast to y's shape
    if log:
        tangent = z_tangent - (y.exp() * z_tangent).sum(ctx.dim, keepdim=True)
    else:
        tangent = y * (z_tangent - (y * z_tangent).sum(ctx.dim, keepdim=True))
    return tangent.to(out_dtype)


def batch_first(t: Optional[Tensor], batch_dim: Optional[int], rank: int) -> Optional[Tensor]:
    """t (a mask or bias under vmap, batched at batch_dim or not at all) with its batch dim first and as many
    dims as a batched x of `rank` dims: ones put after the batch dim, so that it broadcasts against x."""
    if t is None or batch_dim is None:
        return t
    t = t.movedim(batch_dim, 0)
    return t.reshape(t.shape[0], *(1,) * (rank - t.dim()), *t.shape[1:])


_register("softmax", log=False)
_register("log_softmax", log=True)
