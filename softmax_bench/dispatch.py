"""`softmax(x, dim, variant=...)`: validation, any rank to rows, and the `auto` rule.

Which variant runs is decided once per (variant asked for, N, dtype, device, whether a CUDA graph is being
captured) and kept (`resolve_variant`): a call with a key seen before scans no table, asks no variant what it
supports and reads no device facts. The key is the decision's inputs; a rule that came to depend on the fusion
would take it as one more argument of `_resolve`, and so be keyed by it. `clear_caches` forgets the decisions
with the tables read (`tune` calls it after writing a table); the Triton version cannot change in a process.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from functools import lru_cache

import torch
from torch.autograd import forward_ad

from . import kernels, prologue_folding, replay
from .auto_table import AutoTable, table_for, triton_version
from .kernels import (DTYPES, PLAIN, Backward, Fusion, Variant, backwards, dtype_name, interpreted, traced,
                      variants)


# Without a table, rows this wide go to cluster where it runs, though fused holds them: at 32768 every measurement
# has cluster ahead. H200 (Triton 3.8 table): softmax bf16 130.0 µs against fused's 170.3, fp32 257.1 against 260.9,
# causal 149.3 / 255.5 against 261.5 / 399.3. H100 (no table; docs/perf-notes.md, seventy-third session), % of a
# copy: key-padded bf16 99.5 against fused's 86.3, biased rows/64 bf16 85.9 against 57.7, fp32 98.1 against 69.6.
RULE_CLUSTER_FROM = 32768


class SoftmaxInputError(ValueError):
    """Bad input to softmax: the message says what to do."""


class DimOutOfRange(SoftmaxInputError, IndexError):
    """A dim outside x's dims: an IndexError too, as torch's (code written for torch.softmax catches that)."""


class UnsupportedDtype(TypeError, NotImplementedError):
    """An x of a dtype the kernels do not take: a NotImplementedError too, as torch's kernels raise for one."""


def auto_choice(N: int, dtype: torch.dtype, device: torch.device | None = None,
                capturing: bool | None = None, log: bool = False, form: str = "softmax") -> tuple[str, str]:
    """The variant `auto` runs for rows of N elements of dtype on `device`, and why.

    From the table measured on that GPU under this Triton (softmax_bench.auto_table, whose docstring gives the
    rule); with none — on CPU, or on a GPU or Triton nobody has tuned — the declared-support rule: cluster where it
    runs (Triton ≥ 3.8, sm_90) and holds the row from N = RULE_CLUSTER_FROM on, fused below that or where cluster
    does not run while it holds the row in registers without spilling (fused.MAX_N), else two_pass, which takes any
    width and reads the row twice.
    device None: the current CUDA device, unless the kernels run in Triton's interpreter. While a CUDA graph is
    being captured (capturing None: asked now), variants that are not graph-safe (split) are passed over. log:
    for log_softmax, which every variant computes and the same table picks for (it was measured on softmax).
    form: auto_table.table_form the call (causal, masked): the table's entries of that form where it has them.
    """
    registry = variants()
    if dtype == torch.float64:
        return "eager", "float64: torch's own softmax (the Triton variants take fp32, bf16 and fp16)"
    table = _table_of(device)
    if table is not None:
        if capturing is None:
            capturing = torch.cuda.is_available() and torch.cuda.is_current_stream_capturing()

        def runs_here(name: str) -> bool:
            variant = registry.get(name)
            return variant is not None and variant.supports(N, dtype) and (variant.graph_safe or not capturing)

        picked = table.pick(N, dtype_name(dtype), runs_here, form)
        if picked is not None:
            return picked
    fused = registry["fused"]
    cluster_runs = registry["cluster"].supports(N, dtype) and (device is None or device.type == "cuda")
    if cluster_runs and N >= RULE_CLUSTER_FROM:
        return "cluster", (f"N = {N} ≥ {RULE_CLUSTER_FROM}: the row held across a thread-block cluster, one read and "
                           "one write (measured ahead of fused's one program a row from this width)")
    if fused.supports(N, dtype):
        return "fused", f"N = {N} ≤ {fused.max_n}: the row fits in registers without spilling, one read and one write"
    return "two_pass", f"N = {N} > {fused.max_n}: a row in registers would spill; two reads and one write instead"


def table_in_use() -> dict | None:
    """Which table `auto` picks from on the current GPU (its file, when and at which commit `tune` wrote it), for
    a run's metadata; None where it uses the rule."""
    table = _table_of(None)
    if table is None:
        return None
    return {"file": table.source, "created": table.meta.get("created"), "commit": table.meta.get("commit")}


def _table_of(device: torch.device | None) -> AutoTable | None:
    if device is None:
        if interpreted() or not torch.cuda.is_available():
            return None
        device = torch.device("cuda", torch.cuda.current_device())
    if device.type != "cuda":
        return None
    return table_for(torch.cuda.get_device_name(device), triton_version())


def resolve_variant(name: str, N: int, dtype: torch.dtype, device: torch.device | None = None,
                    log: bool = False, form: str = "softmax") -> Variant:
    """The Variant for `name` ('auto' included) on rows of N elements of dtype on `device` (None: as auto_choice
    takes it), for log_softmax when `log`, or a SoftmaxInputError that says what to use. Decided once per key
    (`_resolve`)."""
    if device is None:
        on_gpu = torch.cuda.is_available() and not interpreted()
        device = torch.device("cuda" if on_gpu else "cpu")
    on_gpu = device.type == "cuda"
    if on_gpu and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return _resolve(name, N, dtype, device, on_gpu and torch.cuda.is_current_stream_capturing(), log, form)


@lru_cache(maxsize=4096)
def _resolve(name: str, N: int, dtype: torch.dtype, device: torch.device, capturing: bool,
             log: bool = False, form: str = "softmax") -> Variant:
    registry = variants()
    if name == "auto":
        name = auto_choice(N, dtype, device, capturing, log, form)[0]
    if name not in registry:
        known = ", ".join([*registry, "auto"])
        raise SoftmaxInputError(f"unknown variant {name!r}; known variants: {known}")
    variant = registry[name]
    reason = variant.unsupported(N, dtype)
    if reason is not None:
        raise SoftmaxInputError(reason)
    if variant.triton and device.type != "cuda" and not interpreted():
        raise SoftmaxInputError(
            f"the Triton variant {variant.name!r} needs a CUDA tensor (got one on {device}); move it with "
            "x.cuda(), or set TRITON_INTERPRET=1 before importing softmax_bench to run it on CPU (slowly)"
        )
    return variant


def clear_caches() -> None:
    """Forget the auto tables read, every variant decided and every call or launch recorded for replay: the next call
    reads and decides again."""
    table_for.cache_clear()
    _resolve.cache_clear()
    replay.PLANS.clear()
    replay.CALLED_ONCE.clear()
    replay.LAUNCHES.clear()


def check_tensor(x: torch.Tensor, variant: str = "auto") -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax needs a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in DTYPES.values() and not (x.dtype == torch.float64 and variant in ("eager", "auto")):
        raise UnsupportedDtype(
            f"softmax needs a float32, bfloat16 or float16 tensor (float64 with variant='auto' or 'eager', which "
            f"run torch's), got {x.dtype}; convert it first, e.g. x.float()"
        )


def with_dtype(x: torch.Tensor, dtype: torch.dtype | None) -> tuple[torch.Tensor, torch.dtype | None]:
    """torch's `dtype=`: (the tensor to take the softmax of, the output dtype to fuse into its store, or None).
    torch casts x to dtype first; so do we, except for 16-bit x and fp32 out, which the kernels fuse: x read in
    its own dtype and y written in fp32, in one pass (torch's own half-to-float path does the same)."""
    if dtype is None or (isinstance(x, torch.Tensor) and dtype == x.dtype):
        return x, None
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype or None, got {type(dtype).__name__}")
    if not isinstance(x, torch.Tensor):
        return x, None  # check_tensor says what is wrong
    if (x.dtype, dtype) in replay.FUSED_CASTS:
        return x, dtype
    return x.to(dtype), None


def implicit_dim(x: torch.Tensor, name: str, stacklevel: int = 3) -> int:
    """torch.nn.functional's dim for `dim=None` (deprecated there, and warned of the same way): 0 for 0-, 1- and
    3-D tensors, else 1. stacklevel: torch's _stacklevel, counted from softmax as torch counts it from F.softmax."""
    ndim = x.dim() if isinstance(x, torch.Tensor) else 0
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel + 1)  # + given_dim's frame
    return 0 if ndim in (0, 1, 3) else 1


def given_dim(x: torch.Tensor, dim, name: str, stacklevel: int = 3) -> int:
    """The dim a call names, as torch reads it: None as torch.nn.functional picks (implicit_dim, warned at
    `stacklevel`); an integer of another type (a NumPy integer, an integer tensor of one element) as its int,
    through __index__; a bool or anything else as itself, for check_dim to refuse."""
    if dim is None:
        return implicit_dim(x, name, stacklevel)
    if type(dim) is int or isinstance(dim, bool):
        return dim
    try:
        return operator.index(dim)
    except TypeError:
        return dim


def dim_last(t: torch.Tensor, dim: int) -> torch.Tensor:
    """t with `dim` moved last (a view; t itself when it is last already); a 0-d t as one element."""
    if t.dim() == 0:
        return t.reshape(1)
    return t if dim % t.dim() == t.dim() - 1 else t.movedim(dim, -1)


def as_rows(x_last: torch.Tensor) -> torch.Tensor:
    """An (M, N) tensor with contiguous columns over the last dim of x_last: a view when strides allow."""
    if x_last.stride(-1) != 1:
        x_last = x_last.contiguous()  # the kernels need unit column stride: copy explicitly
    if x_last.dim() == 2:
        return x_last
    # a view when the leading dims collapse, else a copy; rows of no columns counted, where -1 cannot say how many
    return x_last.reshape(-1 if x_last.shape[-1] else math.prod(x_last.shape[:-1]), x_last.shape[-1])


def fusion_for(x: torch.Tensor, dim: int, scale, mask, causal: bool, log: bool = False,
               out_dtype: torch.dtype | None = None, bias: torch.Tensor | None = None) -> Fusion:
    """Check scale, mask, causal and bias against x and bring the mask (uint8) and the bias to x's rows (unit
    column stride; shared rows as they are)."""
    if scale is None and mask is None and not causal and not log and out_dtype is None and bias is None:
        return PLAIN
    if scale is not None and not isinstance(scale, numbers.Real):  # a NumPy float too
        hint = " (a 0-d tensor: pass scale.item())" if isinstance(scale, torch.Tensor) else ""
        raise TypeError(f"scale must be a number, got {type(scale).__name__}{hint}")
    rows_mask, mask_group, mask_period = None, 1, 0
    if mask is not None:
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            got = mask.dtype if isinstance(mask, torch.Tensor) else type(mask).__name__
            raise TypeError(f"mask must be a bool tensor (True = keep), got {got}; e.g. mask = lengths_mask > 0")
        rows_mask, mask_group, mask_period = broadcast_rows(mask, x, dim, "mask")
        # traced, it stays bool: torch 2.11's inductor cannot lower a bool's view as uint8 (a compiled torch.func.grad
        # of a masked call failed so), and the kernels load either, the eager variant compares either with 0
        if not kernels.traced(x):
            rows_mask = rows_mask.view(torch.uint8)
    rows_bias, bias_group, bias_period = None, 1, 0
    if bias is not None:
        check_bias(bias, x)
        rows_bias, bias_group, bias_period = broadcast_rows(bias, x, dim, "bias")
    causal_m = None
    if causal:
        if x.dim() > 0 and dim % x.dim() != x.dim() - 1:
            raise SoftmaxInputError("causal masks the last dim (keys) against the one before it (queries); use dim=-1")
        causal_m = x.shape[-2] if x.dim() >= 2 else 1
    return Fusion(scale=1.0 if scale is None else float(scale), mask=rows_mask, causal_m=causal_m, log=log,
                  out_dtype=out_dtype, mask_group=mask_group, mask_period=mask_period, bias=rows_bias,
                  bias_group=bias_group, bias_period=bias_period)


def check_bias(bias, x: torch.Tensor) -> None:
    """A bias is a float tensor (float64 only beside float64 x, which torch's softmax takes)."""
    if not isinstance(bias, torch.Tensor):
        raise TypeError(f"bias must be a float tensor broadcastable to x, got {type(bias).__name__}")
    if bias.dtype not in DTYPES.values() and not (bias.dtype == torch.float64 == x.dtype):
        raise TypeError(f"bias must be a float32, bfloat16 or float16 tensor, got {bias.dtype}; convert it first, "
                        "e.g. bias.to(x.dtype)")


def broadcast_rows(t: torch.Tensor, x: torch.Tensor, dim: int, what: str) -> tuple[torch.Tensor, int, int]:
    """A mask or bias broadcastable to x as the kernels take it: (its rows, with unit column stride; the group and
    period of rows of x that share each, Fusion's mask_group and mask_period): a tensor broadcast over x's leading
    dims at either end keeps its own rows (`shared_rows`); any other is expanded to x's rows, a row broadcast to
    all of them keeping row stride 0 (read once). It must be on x's device."""
    if t.device != x.device:
        raise SoftmaxInputError(f"{what} is on {t.device} and x on {x.device}; move the {what} to x's device")
    if t.shape != x.shape:
        try:
            expanded = t.expand(x.shape)
        except RuntimeError:
            raise SoftmaxInputError(
                f"{what} of shape {tuple(t.shape)} does not broadcast to x's shape {tuple(x.shape)}"
            ) from None
        shared = shared_rows(t, x, dim)
        if shared is not None:
            return shared
        t = expanded
    return as_rows(dim_last(t, dim)), 1, 0


def shared_rows(mask: torch.Tensor, x: torch.Tensor, dim: int) -> tuple[torch.Tensor, int, int] | None:
    """A mask (or bias) broadcast over some of x's leading dims as the rows it has, not expanded to x's: (its rows,
    mask_group, mask_period; Fusion's), or None where expanding it costs nothing (no dim broadcast, or all of them:
    one row, read with row stride 0) or the kernels cannot share its rows (dim is not the last, the mask is
    broadcast over the keys, or its broadcast dims are not at the ends: [B, 1, S, S] over [B, H, S, S])."""
    if x.dim() < 2 or dim % x.dim() != x.dim() - 1 or mask.shape[-1] != x.shape[-1]:
        return None
    sizes = (1,) * (x.dim() - mask.dim()) + tuple(mask.shape)
    # each leading dim of x: "k" the mask has it (keeps), "b" broadcast over it; dims of size 1 say nothing
    kinds = "".join("k" if m == n else "b" for n, m in zip(x.shape[:-1], sizes[:-1]) if n != 1)
    if "k" not in kinds or "b" not in kinds or "bk" in kinds.lstrip("b"):
        return None  # all kept, all broadcast, or kept dims that are not one run
    dims = [n for n in x.shape[:-1] if n != 1]  # those `kinds` speaks of
    kept_from = kinds.index("k")
    kept_to = kinds.rindex("k") + 1
    group = math.prod(dims[kept_to:])
    period = math.prod(dims[kept_from:kept_to]) if kept_from > 0 else 0
    rows = mask.reshape(sizes)[tuple(slice(None) if m == n != 1 else 0 for n, m in zip(x.shape[:-1], sizes[:-1]))]
    return as_rows(rows), group, period  # a view where the kept dims collapse, else a copy of the mask's own rows


def through_op(x, bias=None) -> bool:
    """Whether a call goes through the registered op (softmax_bench.library) or its autograd formula: only where it
    is needed, since the dispatcher costs tens of µs a call. The op while torch.compile traces; the formula, applied
    eagerly (with_autograd), when x or the bias needs a gradient, under torch.func's transforms, and in a forward-mode
    AD level (torch.autograd.forward_ad), where x may carry a tangent."""
    return traced(x) or (
        (getattr(x, "requires_grad", False) or getattr(bias, "requires_grad", False)) and torch.is_grad_enabled()
    ) or torch._C._are_functorch_transforms_active() or forward_ad._current_level >= 0


# log → the registered op's autograd formula as a torch.autograd.Function (library.py fills them): EAGER_AUTOGRAD's,
# which an eager call with a gradient applies in place of the op; TRANSFORMED_AUTOGRAD's, the same under
# torch.func's transforms (a setup_context and a vmap rule, as they need)
EAGER_AUTOGRAD: dict[bool, type] = {}
TRANSFORMED_AUTOGRAD: dict[bool, type] = {}


def with_autograd(x, dim, scale, mask, causal, variant, log: bool, out_dtype, bias) -> torch.Tensor:
    """A call that goes through the registered op (through_op): the op itself while torch.compile traces, else its
    autograd formula applied eagerly."""
    if torch._C._are_functorch_transforms_active():
        return TRANSFORMED_AUTOGRAD[log].apply(x, (dim, scale, mask, causal, variant, out_dtype), bias)
    if traced(x):
        prologue_folding.install()  # before inductor lowers the graph being traced: x * c into the scale, …
        op = torch.ops.softmax_bench.log_softmax if log else torch.ops.softmax_bench.softmax
        return op(x, dim, scale, mask, causal, variant, out_dtype, bias)
    return EAGER_AUTOGRAD[log].apply(x, (dim, scale, mask, causal, variant, out_dtype), bias)


def softmax(
    x: torch.Tensor,
    dim: int | None = -1,
    dtype: torch.dtype | None = None,
    *,
    scale: float | None = None,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    variant: str = "auto",
    bias: torch.Tensor | None = None,
    _stacklevel: int = 3,
) -> torch.Tensor:
    """Softmax of `x` over `dim`, for a tensor of any rank; the output has x's shape, and x's dtype or `dtype`.

    torch.softmax's signature: `softmax(x, dim, dtype)`. dim may be negative; dim=None picks as
    torch.nn.functional.softmax does (0 for 0-, 1- and 3-D x, else 1, with torch's deprecation warning); the
    default is the last dim. `_stacklevel` is F.softmax's (the frame dim=None's warning names), which torch.nn.Softmax
    passes: so softmax_bench.softmax can stand in for F.softmax (its third positional is dtype, as torch.softmax's).
    dtype: the output's, x cast to it first as torch does, except that 16-bit x with
    dtype=torch.float32 is read in its own dtype and written in fp32 in the same pass (one read, one write).
    float64 (x or dtype) runs torch's own softmax.

    scale multiplies x before the max. mask is a bool tensor broadcastable to x: False masks a position out. A mask
    broadcast over x's leading dims at either end ([B, 1, 1, S] over [B, H, S, S]; [S, S] over a batch) is read as
    it is, its rows shared by x's, not expanded (cluster's log_softmax backward expands it).
    causal (dim must be the last) masks column j of row i when j > i + (N - M), for queries i < M (the dim before
    the last) and keys j < N: bottom-right aligned, as FlashAttention does; for a square input, j > i.
    bias is a float tensor broadcastable to x (fp32, bf16 or fp16: an attention bias, ALiBi, transformers' additive
    mask), added after the scale: softmax(where(keep, x · scale + bias, -inf)), in fp32. Shared rows are read as a
    shared mask's are. In the Triton variants a bias at or below its dtype's minimum masks its position out, as -inf
    does (eager and unfused add it as torch does). It gets a gradient when it requires one: dx summed over the dims
    it is broadcast over. Every variant adds it.

    Every variant accumulates in fp32, and every Triton variant rounds its fp32 result once to a 16-bit output.
    In the Triton variants (fused, cluster, split, two_pass, online) and unfused, a slice that is entirely -inf or
    masked out gives zeros; `eager` (torch.softmax) gives NaN there. NaN in a slice gives NaN in that slice only.
    An empty tensor gives an empty tensor.

    Differentiable, twice and in forward mode (the backward reads the saved y, not x: `softmax_backward`; the
    second derivatives and the jvp are torch's ops on y), and traced by torch.compile as
    the registered op softmax_bench::softmax: at a row width fixed when traced, where fused is the variant for it,
    fused's kernel in the graph (library.IN_GRAPH); else an op that decides the variant when it runs.

    variant: 'auto' (the table measured on this GPU, else a rule: `auto_choice`), or one of
    `softmax_bench.variants()`: 'fused' (the row in registers, N ≤ 32768), 'cluster' (a row across a thread-block
    cluster; Triton ≥ 3.8 on sm_90), 'split' (a row over programs resident at once), 'two_pass' (any width, two
    reads), 'online' (one read, an online max), 'eager' (torch's own ops) and 'unfused' (torch ops, pass by pass).
    Triton variants need a CUDA tensor, or TRITON_INTERPRET=1 set before softmax_bench is imported.
    """
    if not torch.compiler.is_compiling() and \
            (y := replay.replayed(x, dim, dtype, scale, mask, causal, variant, False, bias)) is not None:
        return y
    dim = given_dim(x, dim, "softmax", _stacklevel)
    x, out_dtype = with_dtype(x, dtype)
    if through_op(x, bias):
        return with_autograd(x, dim, scale, mask, causal, variant, False, out_dtype, bias)
    return replayed_or_forward(x, dim, scale, mask, causal, variant, log=False, out_dtype=out_dtype, bias=bias)


def log_softmax(
    x: torch.Tensor,
    dim: int | None = -1,
    dtype: torch.dtype | None = None,
    *,
    scale: float | None = None,
    mask: torch.Tensor | None = None,
    causal: bool = False,
    variant: str = "auto",
    bias: torch.Tensor | None = None,
    _stacklevel: int = 3,
) -> torch.Tensor:
    """log_softmax of `x` over `dim`: softmax's arguments and variants, computed as
    x − max − log Σ e^(x − max) in fp32. A slice that is entirely -inf or masked out gives -inf in the Triton
    variants and unfused (`eager`, torch.log_softmax, gives NaN); masked-out positions are -inf. Differentiable, and
    traced by torch.compile as softmax_bench::log_softmax.
    """
    if not torch.compiler.is_compiling() and \
            (y := replay.replayed(x, dim, dtype, scale, mask, causal, variant, True, bias)) is not None:
        return y
    dim = given_dim(x, dim, "log_softmax", _stacklevel)
    x, out_dtype = with_dtype(x, dtype)
    if through_op(x, bias):
        return with_autograd(x, dim, scale, mask, causal, variant, True, out_dtype, bias)
    return replayed_or_forward(x, dim, scale, mask, causal, variant, log=True, out_dtype=out_dtype, bias=bias)


# torch.compile's dynamo writes a call of either into its graph as it is, and AOTAutograd traces their Python (it
# reaches the registered op: traced). Dynamo tracing that Python itself guarded each helper it passed through, and
# each compiled call checked them: 68 guard lines against 22 (4.1 against 1.2 µs a check on a CPU, forty-ninth
# session, docs/perf-notes.md). allow_in_graph returns the function itself: an eager call costs nothing more.
torch.compiler.allow_in_graph(softmax)
torch.compiler.allow_in_graph(log_softmax)


def replayed_or_forward(x, dim, scale, mask, causal, variant: str, log: bool,
                        out_dtype: torch.dtype | None = None, bias: torch.Tensor | None = None) -> torch.Tensor:
    """The call's recorded plan replayed when there is one (softmax_bench.replay), else softmax_forward, which
    records one where it can."""
    try:
        key = replay.plan_key(x, dim, scale, mask, causal, variant, log, out_dtype, bias)
        plan = replay.PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors, an unhashable argument: checked below, the long way
        key = plan = None
    if plan is not None:
        return plan(x, mask, bias)
    return softmax_forward(x, dim, scale, mask, causal, variant, log=log, replay_key=key, out_dtype=out_dtype,
                           bias=bias)


def check_dim(x: torch.Tensor, dim: int) -> None:
    ndim = max(x.dim(), 1)
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"dim must be an int, got {type(dim).__name__} {dim!r}")
    if not -ndim <= dim < ndim:
        raise DimOutOfRange(f"dim {dim} is out of range for a {x.dim()}-D tensor; use a dim in [{-ndim}, {ndim - 1}]")


def capturing_on(x: torch.Tensor) -> bool:
    """Whether x's stream is being captured into a CUDA graph now (never while a call is traced into a graph)."""
    return x.is_cuda and not kernels.traced_launches and torch.cuda.is_current_stream_capturing()


def softmax_forward(x: torch.Tensor, dim: int, scale: float | None, mask: torch.Tensor | None, causal: bool,
                    variant: str, log: bool = False, replay_key: tuple | None = None,
                    out_dtype: torch.dtype | None = None, bias: torch.Tensor | None = None) -> torch.Tensor:
    """softmax (log_softmax when `log`) of x over dim, with no autograd: what `softmax` runs, and the registered
    ops' implementation. Arguments as `softmax`'s (out_dtype: with_dtype's); with a replay_key
    (softmax_bench.replay), the launches are recorded and kept as the plan that replays calls of that key."""
    check_tensor(x, variant)
    check_dim(x, dim)
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, one of {', '.join([*variants(), 'auto'])}; got "
                        f"{type(variant).__name__}")
    if x.device.type == "meta":  # shapes only, as torch.compile's fake tensors: the output's layout, no kernel
        fusion_for(x, dim, scale, mask, causal, log, out_dtype, bias)
        return like_output(x, out_dtype)
    x_last = dim_last(x, dim)
    # resolve_variant for a tensor's device, which has an index: without its checks (device.type costs 0.3 µs)
    capturing = capturing_on(x)
    fusion = fusion_for(x, dim, scale, mask, causal, log, out_dtype, bias)
    N = int(x_last.shape[-1])  # int: a traced N
    chosen = _resolve(variant, N, x.dtype, x.device, capturing, log, fusion.table_form)
    if x.numel() == 0:
        return like_output(x, out_dtype)
    rows = as_rows(x_last)
    replayable = x.is_cuda and chosen.graph_safe and not capturing and x_last is x and not interpreted()
    y = replay.launched_and_kept(replay_key if replayable else None, lambda: chosen.launch(rows, fusion)[0],
                                 rows, fusion.mask, x, mask, fusion.bias, bias)
    return from_rows(y, x, x_last, dim)


def replayed_or_backward(y: torch.Tensor, dy: torch.Tensor, dim: int, scale: float | None, mask: torch.Tensor | None,
                         causal: bool, variant: str, log: bool = False) -> torch.Tensor:
    """softmax_backward, a call like a recorded one replaying its launches (softmax_bench.replay): an eager
    backward's host time is otherwise Triton's binding of each launch's arguments (35–60 µs on the H200's host)."""
    try:
        key = replay.backward_key(y, dy, dim, scale, mask, causal, variant, log)
        plan = replay.PLANS.get(key)
    except (AttributeError, TypeError):  # not tensors, an unhashable argument: the long way says what is wrong
        key = plan = None
    except RuntimeError:  # a tensor of no storage: a dy batched by a vmap (torch.func's, or the legacy one of
        # gradcheck's batched gradients), which a kernel cannot read and torch's ops batch
        return softmax_backward(y, dy, dim, scale, mask, causal, "eager", log)
    if plan is not None:
        return plan(y, mask, dy)
    return softmax_backward(y, dy, dim, scale, mask, causal, variant, log, replay_key=key)


def softmax_backward(y: torch.Tensor, dy: torch.Tensor, dim: int, scale: float | None, mask: torch.Tensor | None,
                     causal: bool, variant: str, log: bool = False, replay_key: tuple | None = None) -> torch.Tensor:
    """The gradient of softmax (log_softmax when `log`) with respect to x, from its output y and the gradient dy of
    y; the other arguments are the forward's. A Triton variant's backward is `backward_for`'s; a torch variant's,
    torch's (eager_backward). With a replay_key, the launches are recorded and kept as the plan that replays
    calls of that key (as softmax_forward's)."""
    y_last, dy_last = dim_last(y, dim), dim_last(dy, dim)
    N = int(y_last.shape[-1])  # int: a traced N (softmax_bench.library)
    fusion = fusion_for(y, dim, scale, mask, causal, log)
    if y.device.type == "meta":  # shapes only, as softmax_forward's: no kernel, no variant for a device of none
        return like_output(y)
    capturing = capturing_on(y)
    backward = backward_for(_resolve(variant, N, y.dtype, y.device, capturing, log), N, y.dtype)
    if y.numel() == 0:  # empty; torch's op's where it must be differentiable (create_graph=True runs torch's)
        if backward.triton:
            return like_output(y)
        grad_of = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
        return grad_of(dy, y, dim, y.dtype)
    y_rows, dy_rows = as_rows(y_last), as_rows(dy_last)
    # every Triton forward has the same backward (backward_for), so a plan made outside a capture serves one too
    replayable = y.is_cuda and not capturing and y_last is y and dy_last is dy and not interpreted()
    dx = replay.launched_and_kept(replay_key if replayable else None,
                                  lambda: backward.launch(y_rows, dy_rows, fusion)[0],
                                  y_rows, fusion.mask, y, mask, dy_rows, dy)  # dy in the bias's place
    return from_rows(dx, y, y_last, dim)


def backward_for(forward: Variant, N: int, dtype: torch.dtype) -> Backward:
    """The backward of rows of N elements after the forward variant: for a Triton one, cluster where it runs
    (Triton ≥ 3.8, sm_90) and holds the rows (N > 8192: on the H200 it beats fused's one CTA a row at 16384,
    docs/perf-notes.md), else fused while y and dy fit in registers, else two_pass (any width); for a torch one,
    torch's."""
    registry = backwards()
    if not forward.triton:
        return registry["eager"]
    return next((registry[name] for name in ("cluster", "fused") if registry[name].supports(N, dtype)),
                registry["two_pass"])


def from_rows(y: torch.Tensor, x: torch.Tensor, x_last: torch.Tensor, dim: int) -> torch.Tensor:
    """The (M, N) result of a variant on as_rows(x_last) in x's shape, contiguous as torch's softmax output always is:
    x_last's, with its last dim moved back to `dim` and, where that is not the last, copied (one more pass: a
    transposed view's `.view()` failed where torch's output's worked)."""
    if x_last.dim() != 2:
        y = y.view(x_last.shape)
    if x.dim() == 0:
        return y.view(x.shape)
    return y if x_last is x else y.movedim(-1, dim).contiguous()


def like_output(x: torch.Tensor, dtype: torch.dtype | None = None) -> torch.Tensor:
    """An empty tensor laid out as softmax's output for x (of x's dtype, or `dtype`): contiguous, whatever x's
    layout and dim (what the registered ops' fake implementations return)."""
    return x.new_empty(x.shape, dtype=dtype)
