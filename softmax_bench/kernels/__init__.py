"""The softmax variants and their registry.

Each module in this package is one variant. It declares, as data, what the rest of the project reads:
its launch, its traffic model (bytes read and written for an M×N input of a dtype), the widest row it
supports and whether it runs on Triton. The sweep, `explain`, the plots and the tables read this registry,
never a list of their own.

Every variant takes a 2-D input whose columns are contiguous (stride 1; any row stride) and writes a
contiguous output of the same shape and dtype, and a Fusion: what is fused around the softmax (a scale, a
keep-mask, a causal mask). `softmax_bench.dispatch` brings tensors of any rank to that form.
"""

from __future__ import annotations

import importlib
import inspect
import os
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Callable

import torch
from torch._subclasses.fake_tensor import is_fake

from ..auto_table import table_form

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# The loads of the forward kernels (fused's EVICT, a cluster's evict): evict_last, as torch.compile's forward loads
# (its looped softmax: docs/perf-notes.md, thirtieth session), unless SOFTMAX_BENCH_FORWARD_EVICT=plain. On the H200
# (thirty-first session, scripts/eviction.py, each call on the next of three copies of x) evict_last ran 1–4 points
# of a copy faster in fused and the cluster, every form and both dtypes, at fp32 scaled 8192 and 16384 up to
# torch.compile (98.1 → 101.8 against its 101.8 and 101.4). It keeps dead rows in L2: a next kernel whose working
# set is 24–40 MB pays 1–6 µs (fifth session, scripts/l2-after.py), as after the backward, which loads so too.
# Plain where evict_last measured slower: fused's narrower causal rows (fused.CAUSAL_EVICT_FROM) and the cluster
# configurations where it costs registers (cluster.PLAIN_LOADS).
# None where the setting names neither: a forward launch then raises settings_problem()'s ValueError
# (forward_evict_setting), and the CLI exits 2 with it, not a traceback at import.
FORWARD_EVICT = {"": "evict_last", "evict_last": "evict_last", "plain": ""}.get(
    os.environ.get("SOFTMAX_BENCH_FORWARD_EVICT", ""))


def settings_problem() -> str | None:
    """What is wrong with the SOFTMAX_BENCH_* settings the kernels read, and what to set instead; None if nothing."""
    if FORWARD_EVICT is None:
        return (f"SOFTMAX_BENCH_FORWARD_EVICT={os.environ.get('SOFTMAX_BENCH_FORWARD_EVICT')!r}: set it to plain, "
                "or evict_last (the default), or leave it unset")
    return None


def forward_evict_setting() -> str:
    """FORWARD_EVICT, the forward kernels' loads ("evict_last" or ""), or settings_problem()'s ValueError where
    SOFTMAX_BENCH_FORWARD_EVICT was not understood."""
    if FORWARD_EVICT is None:
        raise ValueError(settings_problem())
    return FORWARD_EVICT


# (atol, rtol) against a float64 reference. Outputs lie in [0, 1]; one rounding to the output dtype is ~2^-9
# (bf16) or 2^-12 (fp16): every Triton variant rounds its fp32 result once (tests/test_rounding.py) but cluster's
# 16-bit softmax, which rounds its exponentials and then the scaled output (issue 28).
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-6, 1e-5),
    torch.bfloat16: (1e-3, 1.6e-2),
    torch.float16: (1e-5, 2e-3),
}
# (atol, rtol) of a backward's dx against a reference computed from the same y and dy: dx is rounded once to the
# dtype, and its row sums are fp32 (a vocabulary row's Σ dy carries an fp32 error into every element).
GRAD_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-5, 1e-4),
    torch.bfloat16: (2e-3, 1.6e-2),
    torch.float16: (5e-4, 4e-3),
}
SOFTMAX_FLOPS_PER_ELEMENT = 5  # max, subtract, exp, add, multiply by 1/sum
# dx = y · (dy − Σ dy·y): the product dy·y, its sum, the subtraction, the product with y (log_softmax's
# dy − e^y · Σ dy: the sum, exp, the product, the subtraction)
BACKWARD_FLOPS_PER_ELEMENT = 4
REGISTER_BUDGET = 255  # registers a thread can address on NVIDIA GPUs


def dtype_name(dtype: torch.dtype) -> str:
    """'fp32', 'bf16' or 'fp16' for a supported torch dtype."""
    for name, d in DTYPES.items():
        if d == dtype:
            return name
    raise TypeError(f"unsupported dtype {dtype}; softmax-bench supports {', '.join(DTYPES)}")


@dataclass(frozen=True)
class Fusion:
    """What a variant applies around the softmax: y = softmax(where(keep, x · scale, -inf)), or its log.

    mask: rows of a keep-mask (True = kept) as uint8, shaped like x's rows, unit column stride; a row stride of 0
    broadcasts one row of mask to every row. causal_m: the query length M of a bottom-right-aligned causal mask
    (row r, query i = r mod M, keeps columns j ≤ i + N − M), or None. log: log_softmax instead of softmax (an
    all -inf row gives -inf, as exp(-inf) = 0 gives zeros). out_dtype: y's dtype where it is not x's (fp32 from
    16-bit x, `softmax(x, dtype=torch.float32)`: x read in its own dtype, y stored in fp32, in the same pass), or
    None. mask_group, mask_period: where rows of x share rows of the mask (a broadcast mask, not expanded): row r's
    mask row is (r // mask_group) mod mask_period (mask_period 0: no repeat), e.g. mask_group = H·S for a
    key-padding mask [B, 1, 1, S] over [B, H, S, S] scores, mask_period = S for a [1, 1, S, S] mask over a batch.
    bias: rows of an additive bias (fp32, bf16 or fp16), added after the scale and before the mask:
    y = softmax(where(keep, x · scale + bias, -inf)); laid out and shared (bias_group, bias_period) as the mask's
    rows are. In the Triton variants a bias at or below its dtype's minimum (transformers' additive mask) masks
    its position out, as -inf does: a row biased so everywhere gives what a fully masked row gives. mask_phased,
    bias_phased: the shared mask's, the shared bias's rows laid out in phase copies (masking.phased_rows, a launch's
    own), so that each row of x finds its shared row on its own 16-byte grid; mask_bits: those copies of the mask
    as bits, a byte for each vector of 8 lanes (masking.phased_bits).
    """

    scale: float = 1.0
    mask: torch.Tensor | None = None
    causal_m: int | None = None
    log: bool = False
    out_dtype: torch.dtype | None = None
    mask_group: int = 1
    mask_period: int = 0
    bias: torch.Tensor | None = None
    bias_group: int = 1
    bias_period: int = 0
    mask_phased: bool = False
    bias_phased: bool = False
    mask_bits: bool = False

    @property
    def mask_shared(self) -> bool:
        """Whether rows of x share rows of the mask (mask_group, mask_period)."""
        return self.mask is not None and (self.mask_group != 1 or self.mask_period != 0)

    @property
    def bias_shared(self) -> bool:
        """Whether rows of x share rows of the bias (bias_group, bias_period)."""
        return self.bias is not None and (self.bias_group != 1 or self.bias_period != 0)

    def shared_mask_shapes(self, N: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(x's rows viewed as the scores a shared mask broadcasts over, [-1, its rows, mask_group, N]; the mask
        viewed to broadcast there, [1, its rows, 1, N]): mask row (r // mask_group) mod its rows, as the kernels
        take it (a mask_period is its row count)."""
        return shared_shapes(self.mask.shape[0], self.mask_group, N)

    def shared_bias_shapes(self, N: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """shared_mask_shapes for the bias's rows."""
        return shared_shapes(self.bias.shape[0], self.bias_group, N)

    @property
    def plain(self) -> bool:
        """A bare softmax: nothing fused around it."""
        return (self.scale == 1.0 and self.mask is None and self.causal_m is None and not self.log
                and self.bias is None)

    @property
    def table_form(self) -> str:
        """Which entries of an auto table it takes (auto_table.table_form): masked, causal or softmax."""
        return table_form(self.mask, self.causal_m is not None, self.bias)

    def without_bias(self) -> Fusion:
        """The fusion a backward takes: dx comes from y, whatever bias made it (its gradient is taken from dx)."""
        return replace(self, bias=None, bias_group=1, bias_period=0) if self.bias is not None else self

    def mask_bytes(self) -> int:
        """Bytes of mask read from memory: a broadcast row, and a row shared by several rows of x, is read once
        (the rows that share it come together, or the mask is small: it stays in L2)."""
        return rows_bytes(self.mask)

    def bias_bytes(self) -> int:
        """Bytes of bias read from memory, counted as the mask's are."""
        return rows_bytes(self.bias)


def shared_shapes(rows: int, group: int, N: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(x's rows viewed as [-1, rows, group, N]; a tensor of `rows` shared rows viewed as [1, rows, 1, N])."""
    return (-1, rows, group, N), (1, rows, 1, N)


def row_count(rows: torch.Tensor) -> int:
    """How many distinct rows a mask's or bias's rows hold: a broadcast row (row stride 0) one."""
    return 1 if rows.stride(0) == 0 else rows.shape[0]


def rows_bytes(rows: torch.Tensor | None) -> int:
    """Bytes of a mask's or bias's rows read from memory: a broadcast row (row stride 0) once."""
    if rows is None:
        return 0
    return row_count(rows) * rows.shape[1] * rows.element_size()


PLAIN = Fusion()


@dataclass(frozen=True)
class Traffic:
    """Bytes a variant moves, pass by pass: (what, bytes read, bytes written).

    `passes` go to device memory (HBM). `from_l2` are the passes the L2 cache serves instead, which HBM never sees:
    a second read of data still in L2, a write overwritten in L2 before it is written back. Each variant declares
    which of its passes are served from L2, and for which rows. read_bytes, write_bytes and total_bytes count HBM.
    """

    passes: tuple[tuple[str, int, int], ...]
    from_l2: tuple[tuple[str, int, int], ...] = ()

    @property
    def read_bytes(self) -> int:
        return sum(r for _, r, _ in self.passes)

    @property
    def write_bytes(self) -> int:
        return sum(w for _, _, w in self.passes)

    @property
    def total_bytes(self) -> int:
        """HBM bytes, read and written."""
        return self.read_bytes + self.write_bytes

    @property
    def l2_bytes(self) -> int:
        """Bytes read and written that L2 serves."""
        return sum(r + w for _, r, w in self.from_l2)


@dataclass
class Launch:
    """What a launch chose (BLOCK, num_warps, …) and the compiled kernels it ran (for n_regs / n_spills)."""

    config: dict = field(default_factory=dict)
    compiled: list = field(default_factory=list)

    @property
    def n_regs(self) -> int | None:
        regs = [getattr(k, "n_regs", None) for k in self.compiled]
        regs = [r for r in regs if r is not None]
        return max(regs) if regs else None

    @property
    def n_spills(self) -> int | None:
        spills = [getattr(k, "n_spills", None) for k in self.compiled]
        spills = [s for s in spills if s is not None]
        return max(spills) if spills else None


def _not_here(kernel: Variant | Backward, here: bool) -> str | None:
    """Why this process cannot run a variant or backward at all (kernel.here), when `here` asks, or None."""
    return kernel.here() if here and kernel.here is not None else None


@dataclass(frozen=True)
class Variant:
    """One softmax implementation, as the registry knows it.

    launch(x, fusion) computes softmax (log_softmax when fusion.log) over the last dim of the 2-D `x` (with the
    fusion applied) and returns the output and a Launch.
    traffic(M, N, dtype, fusion) is the variant's own model of the bytes it moves.
    max_n is the widest row it supports (None: any).
    masked_rows_zero says whether a row that is entirely -inf gives zeros (True for every Triton variant) or NaN.
    flops_per_element counts max, subtract, exp, add and the final multiply (5), plus what the variant redoes
    (two_pass: subtract and exp again; online: the rescale); exp counts as one, as the roofline convention.
    graph_safe is False for a variant whose launch must not be captured in a CUDA graph and replayed.
    limits(N, dtype), where given, says why the variant cannot run rows of N elements of dtype (its own bounds), or
    None; here(), where given, why this process cannot run it at all (its Triton, its GPU), or None.
    float64 is True for a variant that also takes float64 input (eager: what gradcheck runs through).
    """

    name: str
    summary: str
    launch: Callable[[torch.Tensor, Fusion], tuple[torch.Tensor, Launch]]
    traffic: Callable[[int, int, torch.dtype, Fusion], Traffic]
    triton: bool
    max_n: int | None = None
    masked_rows_zero: bool = True
    flops_per_element: int = SOFTMAX_FLOPS_PER_ELEMENT
    graph_safe: bool = True
    limits: Callable[[int, torch.dtype], str | None] | None = None
    float64: bool = False
    here: Callable[[], str | None] | None = None

    def unsupported(self, N: int, dtype: torch.dtype, here: bool = True) -> str | None:
        """Why this variant cannot run rows of N elements of `dtype` (here: in this process; else on a GPU it
        builds for), or None when it can."""
        if (reason := _not_here(self, here)) is not None:
            return reason
        if dtype not in DTYPES.values() and not (self.float64 and dtype == torch.float64):
            return f"dtype {dtype} is not one of {', '.join(DTYPES)}"
        if self.max_n is not None and N > self.max_n:
            return (f"{self.name} holds a row in registers and supports N ≤ {self.max_n} (got N = {N}); use "
                    "variant='auto' or 'two_pass' for wider rows")
        return self.limits(N, dtype) if self.limits is not None else None

    def supports(self, N: int, dtype: torch.dtype) -> bool:
        return self.unsupported(N, dtype) is None


@dataclass(frozen=True)
class Backward:
    """One softmax backward, as the registry knows it: dx from the forward's output y and the gradient dy.

    launch(y, dy, fusion) takes 2-D y and dy with unit column stride (any row stride) and returns a contiguous dx
    and a Launch: dx = scale · y · (dy − Σ dy·y) for softmax, scale · (dy − e^y · Σ dy) for log_softmax
    (fusion.log), row sums in fp32; positions the fusion masks out get zero gradient.
    traffic(M, N, dtype, fusion) is its own model of the bytes it moves. max_n is the widest row it supports.
    limits(N, dtype), where given, says why it cannot run rows of N elements of dtype (its own bounds), or None;
    here(), where given, why this process cannot run it at all (its Triton, its GPU), or None.
    """

    name: str
    summary: str
    launch: Callable[[torch.Tensor, torch.Tensor, Fusion], tuple[torch.Tensor, Launch]]
    traffic: Callable[[int, int, torch.dtype, Fusion], Traffic]
    triton: bool
    max_n: int | None = None
    limits: Callable[[int, torch.dtype], str | None] | None = None
    here: Callable[[], str | None] | None = None

    def unsupported(self, N: int, dtype: torch.dtype, here: bool = True) -> str | None:
        if (reason := _not_here(self, here)) is not None:
            return reason
        if self.max_n is not None and N > self.max_n:
            return f"{self.name}'s backward holds y and dy in registers and supports N ≤ {self.max_n} (got N = {N})"
        return self.limits(N, dtype) if self.limits is not None else None

    def supports(self, N: int, dtype: torch.dtype) -> bool:
        return self.unsupported(N, dtype) is None


VARIANT_MODULES = ("fused", "cluster", "split", "two_pass", "online", "eager", "unfused")
# Variants with a backward of their own; each module declares BACKWARD beside VARIANT.
BACKWARD_MODULES = ("fused_backward", "cluster_backward", "two_pass_backward", "eager_backward")


@cache
def variants() -> dict[str, Variant]:
    """The registry: variant name → Variant, in a stable order (Triton variants first, then the torch ones).

    Importing the kernel modules decorates their @triton.jit functions; Triton decides then whether they run
    compiled or through its CPU interpreter (TRITON_INTERPRET=1), so the registry is built on first use.
    """
    found = {}
    for module_name in VARIANT_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        found[module.VARIANT.name] = module.VARIANT
    return found


@cache
def backwards() -> dict[str, Backward]:
    """The backward registry: name → Backward (Triton ones first, then torch's)."""
    found = {}
    for module_name in BACKWARD_MODULES:
        module = importlib.import_module(f"{__name__}.{module_name}")
        found[module.BACKWARD.name] = module.BACKWARD
    return found


@cache  # decided when the kernels were decorated, once a process
def interpreted() -> bool:
    """True when the Triton kernels run through Triton's CPU interpreter (TRITON_INTERPRET=1 at first use)."""
    from triton.runtime.interpreter import InterpretedFunction

    from . import fused

    return isinstance(fused.fused_rows_kernel, InterpretedFunction)


def fake(x) -> bool:
    """Whether x is a tracer's tensor (fake, or functional around a fake one) rather than one with memory. A tensor
    of no subclass is no fake one unless a torch.func transform wraps it (its wrapper's type is torch.Tensor: one
    around a fake tensor where torch.compile traces a torch.func.grad), asked first: is_fake costs 1.5 µs."""
    return (type(x) is not torch.Tensor or torch._C._functorch.is_functorch_wrapped_tensor(x)) and is_fake(x)


def traced(x) -> bool:
    """Whether torch.compile is tracing this call. Dynamo writes a call of softmax or log_softmax into its graph
    without tracing their Python (dispatch's allow_in_graph); AOTAutograd then runs that Python, and the in-graph
    variants' launches, on fake or functional tensors, where torch.compiler.is_compiling() is True under torch 2.14
    but False under 2.11 (the device's)."""
    return torch.compiler.is_compiling() or fake(x)


def elem_size(dtype: torch.dtype) -> int:
    return dtype.itemsize


def cdiv(a: int, b: int) -> int:
    """triton.cdiv for the host: Triton 3.8 wraps its own in a constexpr function, ~2 µs a call against 0.05."""
    return (a + b - 1) // b


def next_power_of_2(n: int) -> int:
    """triton.next_power_of_2 for the host (0 for 0, as Triton's), for what runs at every call that is not
    replayed: Triton 3.8's is a constexpr function too."""
    return 1 << (n - 1).bit_length() if n > 0 else 0


def output_like(x: torch.Tensor, fusion: Fusion = PLAIN) -> torch.Tensor:
    """A contiguous tensor of x's shape and device, of x's dtype or the fusion's out_dtype: half the host time of
    torch.empty(shape, dtype=, device=)."""
    return torch.empty_like(x, dtype=fusion.out_dtype, memory_format=torch.contiguous_format)


# While softmax_bench.replay records a call: each launch's (kernel, grid, args, kwargs, compiled kernel), and in
# its `scratch` the buffers of the call's own that scratch() named.
recorded_launches: list | None = None
# While a registered op is traced for torch.compile with its Triton kernels in the graph (softmax_bench.library):
# each launch becomes a node (torch.library.wrap_triton) that the compiled code launches itself.
traced_launches = False


@contextmanager
def launches_traced():
    """launch_kernel puts each launch into the graph being traced (traced_launches) within this block."""
    global traced_launches
    traced_launches = True
    try:
        yield
    finally:
        traced_launches = False


def scratch(tensor: torch.Tensor) -> torch.Tensor:
    """tensor, named a buffer of the call's own that its launches write in full before any of them reads it
    (masking.phased_rows' copies): a replayed call allocates one like it (softmax_bench.replay), where a buffer
    not named so keeps the call from being replayed."""
    if recorded_launches is not None:
        recorded_launches.scratch.append(tensor)
    return tensor


def launch_kernel(kernel, grid: tuple, *args, **kwargs):
    """kernel[grid](*args, **kwargs), the way every variant launches a Triton kernel: returns the compiled kernel,
    and keeps the launch while a call is being recorded for replay (softmax_bench.replay); with
    replay.FAST_LAUNCHES, through the compiled kernel of an earlier launch that specialized alike. While
    traced_launches, the launch goes into the graph being traced, and there is no compiled kernel (None)."""
    from .. import replay  # imported here: replay imports this module

    if traced_launches:
        from torch.library import wrap_triton

        wrap_triton(kernel)[grid](**traced_arguments(kernel, args, kwargs))
        return None
    compiled = replay.launch(kernel, grid, args, kwargs) if replay.FAST_LAUNCHES else kernel[grid](*args, **kwargs)
    if recorded_launches is not None:
        recorded_launches.append((kernel, grid, args, kwargs, compiled))
    return compiled


def traced_arguments(kernel, args: tuple, kwargs: dict) -> dict:
    """Every argument of a launch of `kernel` by name, its defaults filled in: inductor launches a kernel from the
    graph with the arguments the graph names and no others. A pointer left at its default None stays None, as in an
    eager launch: handed a tensor, Triton's launcher pays for it at every call (docs/perf-notes.md, fiftieth
    session)."""
    params = list(kernel.params if hasattr(kernel, "params") else  # (the interpreter's kernel: its function's)
                  inspect.signature(kernel.fn).parameters.values())
    arguments = {param.name: value for param, value in zip(params, args)} | kwargs
    for param in params:
        arguments.setdefault(param.name, param.default)
    if arguments.get("HAS_MASK") is False and "mask_ptr" in arguments:
        # the mask pointer a call with no mask is given (x, unread): in a graph where x is computed, inductor wrote x
        # a second time to pass it (a compiled softmax(t * c), the fold off: 0.27 ms of the call's 0.45 at bf16
        # 16384×8192 on the H100; docs/perf-notes.md, sixtieth session)
        arguments["mask_ptr"] = None
    return arguments


def config_shape(M, N, program_elems: int) -> tuple[int, int]:
    """M and N as a one-program-a-row launch configuration reads them, as ints: M counts only up to the rows one
    program holds (program_elems over N's power of two), so that a shape traced by torch.compile with a dynamic
    M is guarded as "at least that many rows" and N as itself (softmax_bench.library)."""
    N = int(N)
    return int(min(M, max(1, program_elems // next_power_of_2(N)))), N


def one_pass_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN, skips_causal: bool = True
                     ) -> Traffic:
    """Read the input once (and the mask, if any), write the output once: the floor for any softmax. A causal
    row's columns past its diagonal are written (zeros) but never read, unless the kernel reads them anyway
    (skips_causal=False)."""
    written = M * N * elem_size(fusion.out_dtype or dtype)
    if fusion.causal_m is None or not skips_causal:
        return Traffic((("read x, write y", M * N * elem_size(dtype), written),) + mask_pass(fusion),
                       shared_rows_again(M, N, fusion))
    kept = causal_kept(M, N, fusion.causal_m)
    read = f"read x's kept columns ({100 * kept / max(M * N, 1):.0f} % of x: causal rows skip the rest), write y"
    return Traffic(((read, kept * elem_size(dtype), written),) + mask_pass(fusion))


def shared_rows_again(M: int, N: int, fusion: Fusion) -> tuple[tuple[str, int, int], ...]:
    """A shared (or broadcast) mask's and bias's rows as a kernel that takes a row of them for each row of x loads
    them: from memory once (mask_pass), then again for every other row, from the caches. The SMs load what the
    full form's kernel loads (on the H100, a rows/64 bias cost 86 % of the full bias's time for 67 % of its memory
    bytes: docs/perf-notes.md, sixty-seventh session). Rows cut by a causal mask: not counted."""
    if fusion.causal_m is not None:
        return ()
    again = {what: M * N * rows.element_size() - rows_bytes(rows)  # loads, less those from memory
             for what, rows in (("mask", fusion.mask), ("bias", fusion.bias)) if rows is not None}
    return tuple((f"read the shared {what} rows again for each row of x (cache)", loads, 0)
                 for what, loads in again.items() if loads > 0)


def causal_rows_keeping(M: int, N: int, causal_m: int) -> int:
    """Rows of an M×N x that keep at least one column under a bottom-right-aligned causal mask: queries
    i ≥ causal_m − N of each block of causal_m rows."""
    first = max(0, causal_m - N)  # the first query that keeps a column
    return (M // causal_m) * (causal_m - first) + max(0, M % causal_m - first)


def causal_kept(M: int, N: int, causal_m: int) -> int:
    """Elements of an M×N x that a bottom-right-aligned causal mask keeps: row r (query i = r mod causal_m) keeps
    columns j ≤ i + N − causal_m, that is max(0, i + N − causal_m + 1) of them (N for the last query)."""
    def first_queries(q: int) -> int:  # the kept elements of queries 0 … q − 1
        lo = max(0, causal_m - N)  # the first query that keeps a column
        n = q - lo
        return n * (2 * lo + n + 1 + 2 * (N - causal_m)) // 2 if n > 0 else 0

    return (M // causal_m) * first_queries(causal_m) + first_queries(M % causal_m)


def backward_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion = PLAIN, skips_causal: bool = True
                     ) -> Traffic:
    """Read y and dy once, write dx once (log_softmax also reads the mask, to zero what it masked out): the floor
    for any softmax backward. A causal row's y past its diagonal is 0 (-inf for log_softmax) and its gradient
    there is 0, so y is read only where kept, and dy too for softmax (log_softmax sums the whole row's dy), unless
    the kernel reads them anyway (skips_causal=False)."""
    nbytes = M * N * elem_size(dtype)
    passes = (("read y and dy", 2 * nbytes, 0), ("write dx", 0, nbytes))
    if fusion.causal_m is not None and skips_causal:
        kept = causal_kept(M, N, fusion.causal_m) * elem_size(dtype)
        share = f"{100 * kept / max(nbytes, 1):.0f} %"
        # log_softmax: dy of the rows that keep a column (a row that keeps none has no gradient to sum)
        dy_rows = causal_rows_keeping(M, N, fusion.causal_m) * N * elem_size(dtype)
        read = ((f"read y's kept columns ({share}: causal rows skip the rest) and dy of the rows that keep any",
                 kept + dy_rows, 0)
                if fusion.log else
                (f"read y's and dy's kept columns ({share} of each: causal rows skip the rest)", 2 * kept, 0))
        passes = (read, ("write dx", 0, nbytes))
    return Traffic(passes + (mask_pass(fusion.without_bias()) if fusion.log else ()))


def floor_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion, pass_: str) -> Traffic:
    """The floor of a pass: one_pass_traffic forward, backward_traffic backward."""
    return (backward_traffic if pass_ == "backward" else one_pass_traffic)(M, N, dtype, fusion)


def expanded_mask_traffic(M: int, N: int, dtype: torch.dtype, fusion: Fusion, traffic: Callable) -> Traffic:
    """`traffic` of a kernel that takes a mask row for each row of x: a shared mask (Fusion.mask_shared) is first
    written out to x's M rows (masking.mask_expanded), then read whole."""
    if not fusion.mask_shared:
        return traffic(M, N, dtype, fusion)
    expanded = replace(fusion, mask=torch.empty(M, N, dtype=torch.uint8, device="meta"), mask_group=1, mask_period=0)
    kernel = traffic(M, N, dtype, expanded)
    return Traffic((("write the shared mask out to x's rows", fusion.mask_bytes(), M * N),) + kernel.passes,
                   kernel.from_l2)


def mask_pass(fusion: Fusion) -> tuple[tuple[str, int, int], ...]:
    """The mask and the bias a fused kernel reads beside x (a causal mask is computed from indices: no bytes)."""
    passes = (("read mask", fusion.mask_bytes(), 0),) if fusion.mask is not None else ()
    return passes + ((("read bias", fusion.bias_bytes(), 0),) if fusion.bias is not None else ())
