"""Calls replayed: the second call of `softmax` with the same kind of input launches the compiled kernels again
without Triton's argument binding or softmax_bench's own dispatch.

A Triton launch, `kernel[grid](...)`, binds and specializes every argument and looks the compiled kernel up in a
cache, ~12 µs of Python on the H200 before the kernel is queued; softmax_bench's validation and dispatch add as
much again. For inputs alike in everything the launch depended on — the variant asked for, x's shape, strides,
dtype, device and pointer alignment, dim, scale, causal, the mask's layout — the launches are the same but for
the tensors. So the first such call is recorded (every variant launches through `kernels.launch_kernel`) and
kept as a Plan, which later calls run: allocate y, then each compiled kernel's launcher with x, y, the mask and
the bias put in their places.

A call is recorded only when replaying it is safe: a compiled GPU launch (not the interpreter), a graph-safe
variant (a plan made outside a CUDA graph capture then serves captures too, where `auto` would choose the same),
the rows handed to the kernels being x's own memory (no copy made for them; the mask's and the bias's theirs),
and every tensor argument x, y, the mask, the bias or a buffer of the call's own that its launches write in full
before they read it (kernels.scratch: a shared mask's phase copies), which the plan allocates anew at each call. A
tensor argument is told by its address, so that a view of x (the mask's as 8-byte words) replays as x.
`clear_caches` (dispatch) forgets the plans.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from functools import cache, partial

import torch
from torch.autograd import forward_ad

from . import kernels

MAX_PLANS = 4096  # distinct input kinds kept; past it, the plans start over
X, Y, MASK, BIAS, SCRATCH = 0, 1, 2, 3, 4  # where a launch argument comes from at replay (SCRATCH + k: scratch k)
# a launch's arguments that are no tensor, told apart without isinstance(value, torch.Tensor), 0.09 µs for a
# value that is not one (a launch has ~30)
PLAIN_VALUES = frozenset({int, float, bool, str, type(None)})


# With OWN_LAUNCHER, a recorded call is replayed by softmax_bench.launcher: its plan is a launcher.Replay (the
# plan run from C, each launch with its parameters packed once). On the H200 (thirty-eighth session, host-cost.py at
# 64×4000 bf16) the replayed launch alone took 4.17 µs of host against 7.50 through Triton's launch, and auto's
# softmax 1.13× torch.softmax's host µs against 1.22× (scaled-masked 1.28× against 1.68×). On unless
# SOFTMAX_BENCH_OWN_LAUNCHER=0.
OWN_LAUNCHER = os.environ.get("SOFTMAX_BENCH_OWN_LAUNCHER", "1") != "0"

# With CXX_REPLAYED, `replayed` is replayed.cpp's once a plan is kept: the same checks, key and look-up in PLANS,
# the tensors read through libtorch rather than their Python accessors, y allocated by at::empty_like and the
# tensors' addresses read in C for launcher.c. A replayed softmax 2.30 → 1.30 µs on a CPU against a driver that does
# nothing (evidence/experiments/2026-12-05-session42). Built at first use against this torch (cxx_built: 9–13 s,
# then cached as Triton caches its kernels). On an H100 (forty-sixth and forty-seventh sessions, five processes a
# setting) auto's softmax was 0.89–1.14× torch.softmax's host µs with it and 1.05–1.43× without, scaled-masked
# 0.97–1.18× against 1.17–1.47×: those calls took less host time with it in every process than in any without it.
# SOFTMAX_BENCH_CXX_REPLAYED=1: on (a build that fails is said once); =0: off; unset (None): on for a GPU's calls
# where Triton's build helper builds C++ (3.8's; not 3.6's, nor under the interpreter, which keeps no plan), and
# said once if the build fails.
CXX_REPLAYED: bool | None = {"1": True, "0": False}.get(os.environ.get("SOFTMAX_BENCH_CXX_REPLAYED", ""))

# (x's dtype, dtype=) that the kernels read and write in one pass: x read in its 16-bit dtype, y written in fp32
FUSED_CASTS = frozenset({(torch.bfloat16, torch.float32), (torch.float16, torch.float32)})


class Plan:
    """The launches of one recorded call: for each, (launch, argument template, where x, y and the mask go); y's
    dtype; `scratch`, for each buffer of the call's own that the launches write and read, what allocates it anew
    at each call."""

    __slots__ = ("steps", "stream_of", "device_index", "out_dtype", "like_x", "scratch")

    def __init__(self, steps: list, stream_of, device_index: int, out_dtype: torch.dtype, like_x: bool = False,
                 scratch: tuple = ()):
        self.steps = steps
        self.stream_of = stream_of
        self.device_index = device_index
        self.out_dtype = out_dtype
        self.like_x = like_x  # y as torch.empty_like(x) alone (x contiguous, y of its dtype): 0.8 µs, not 1.1 (CPU)
        self.scratch = scratch

    def __call__(self, x: torch.Tensor, mask: torch.Tensor | None, bias: torch.Tensor | None = None) -> torch.Tensor:
        if self.like_x:
            y = torch.empty_like(x)
        else:
            y = torch.empty_like(x, dtype=self.out_dtype, memory_format=torch.contiguous_format)
        stream = self.stream_of(self.device_index)
        tensors = (x, y, mask, bias)
        if self.scratch:  # (allocated on the current stream as the call's own were: freed after its launches)
            tensors += tuple(allocate() for allocate in self.scratch)
        for launch, template, slots in self.steps:
            args = template.copy()
            for position, source in slots:
                args[position] = tensors[source]
            launch(stream, args)
        return y


def launcher(compiled, grid: tuple):
    """launch(stream, args): `compiled` run on `grid` as Triton's own launch runs it after its argument binding.

    Triton 3.8's compiled.run is Python around a C launch that allocates the scratch memory a kernel asks for;
    for a kernel that asks for none (ours) and with no launch hook listening (a profiler's), the C launch is
    called directly, ~2 µs less a call. Other Triton versions, or hooks: compiled.run, as Triton calls it.
    """
    run, function, packed = compiled.run, compiled.function, compiled.packed_metadata
    grid_x, grid_y, grid_z = tuple(grid) + (1,) * (3 - len(grid))
    c_launch = getattr(run, "launch", None)
    direct = (c_launch is not None and all(hasattr(run, name) for name in _C_LAUNCH_FACTS)
              and run.global_scratch_size == 0 and run.profile_scratch_size == 0 and not run.gsan_enabled)
    if direct:
        facts = (run.launch_cooperative_grid, run.launch_pdl, packed, None, None, None, None, None,
                 run.arg_annotations, run.kernel_signature)
    runtime = _runtime_knobs()

    def launch(stream, args):
        if direct and hooks_quiet(runtime):
            c_launch(grid_x, grid_y, grid_z, stream, function, *facts, args)
            return
        enter, leave = runtime.launch_enter_hook, runtime.launch_exit_hook
        metadata = compiled.launch_metadata(grid, stream, *args)
        run(grid_x, grid_y, grid_z, stream, function, packed, metadata, enter, leave, *args)

    return launch


def hooks_quiet(runtime) -> bool:
    """Whether no launch hook (a profiler's) listens: Triton ≥ 3.7 keeps the hooks as chains, never None, empty when
    no one listens; older ones as a callable or None."""
    enter, leave = runtime.launch_enter_hook, runtime.launch_exit_hook
    return not getattr(enter, "calls", enter) and not getattr(leave, "calls", leave)


# What Triton 3.8's launcher (CudaLauncher) has when its C launch takes the arguments called directly above.
_C_LAUNCH_FACTS = ("arg_annotations", "kernel_signature", "launch_cooperative_grid", "launch_pdl",
                   "global_scratch_size", "profile_scratch_size", "gsan_enabled")


@cache
def _runtime_knobs():
    """Triton's runtime knobs (the launch hooks). Imported on first use, when a call is replayed: importing Triton
    with softmax_bench would decide that its functions run compiled before `--interpret` can set
    TRITON_INTERPRET."""
    from triton import knobs

    return knobs.runtime


class Recorded(list):
    """A recorded call's launches (kernels.launch_kernel appends them), and in `scratch` the buffers kernels.scratch
    named."""

    def __init__(self):
        super().__init__()
        self.scratch = []


@contextmanager
def recording():
    """Collect the kernel launches made inside and the scratch buffers named (a Recorded, yielded)."""
    previous, kernels.recorded_launches = kernels.recorded_launches, Recorded()
    try:
        yield kernels.recorded_launches
    finally:
        kernels.recorded_launches = previous


def make_plan(launches: list, rows: torch.Tensor, y_rows: torch.Tensor, mask_rows: torch.Tensor | None,
              x: torch.Tensor, mask: torch.Tensor | None, stream_of=None, bias_rows: torch.Tensor | None = None,
              bias: torch.Tensor | None = None) -> Plan | None:
    """A Plan for the recorded `launches` of a call that gave `rows` (x's rows), `mask_rows` and `bias_rows` (the
    mask's and the bias's) to the variant and got `y_rows`; None when one cannot be replayed from x, a fresh y, the
    mask, the bias and the scratch buffers `launches` names (a Recorded's). stream_of: device index → the stream
    to launch on (None: Triton's, the current torch stream)."""
    if not launches or rows.data_ptr() != x.data_ptr():
        return None
    for given, user in ((mask_rows, mask), (bias_rows, bias)):
        if given is not None and given.data_ptr() != user.data_ptr():
            return None
    scratch = getattr(launches, "scratch", ())
    sources = {}  # address → where it comes from
    for where, tensor in ((X, rows), (Y, y_rows), (MASK, mask_rows), (BIAS, bias_rows), *enumerate(scratch, SCRATCH)):
        if tensor is not None and sources.setdefault(tensor.data_ptr(), where) != where:
            return None  # two of the call's tensors at one address (x given as the bias): a later call's apart
    steps = []
    for kernel, grid, args, kwargs, compiled in launches:
        if compiled is None or not hasattr(compiled, "run"):
            return None
        template, slots = [], []
        for value in bound_arguments(kernel, args, kwargs):
            if type(value) not in PLAIN_VALUES and isinstance(value, torch.Tensor):
                source = sources.get(value.data_ptr())
                if source is None:
                    return None  # a buffer of the variant's own not named scratch: not replayed
                slots.append((len(template), source))
                value = None
            template.append(value)
        steps.append((launcher(compiled, grid), template, tuple(slots)))
    if stream_of is None:
        from triton.runtime import driver

        stream_of = driver.active.get_current_stream
    allocations = tuple(partial(torch.empty, buffer.shape, dtype=buffer.dtype, device=x.device) for buffer in scratch)
    plan = Plan(steps, stream_of, x.get_device(), y_rows.dtype, like_x=y_rows.dtype == x.dtype and x.is_contiguous(),
                scratch=allocations)
    return own_replay(launches, plan) if OWN_LAUNCHER else plan


def launched_and_kept(key: tuple | None, launch, rows: torch.Tensor, mask_rows: torch.Tensor | None,
                      x: torch.Tensor, mask: torch.Tensor | None, bias_rows: torch.Tensor | None = None,
                      bias: torch.Tensor | None = None) -> torch.Tensor:
    """launch() (a variant's launch of `rows`), its output returned; with a key seen before (CALLED_ONCE), its
    launches recorded and kept as the plan that replays calls of that key, where make_plan makes one (the other
    arguments make_plan's)."""
    if key is None:
        return launch()
    if key not in CALLED_ONCE:
        if len(CALLED_ONCE) >= MAX_PLANS:
            CALLED_ONCE.clear()
        CALLED_ONCE.add(key)
        return launch()
    CALLED_ONCE.discard(key)
    with recording() as launches:
        out = launch()
    plan = make_plan(launches, rows, out, mask_rows, x, mask, bias_rows=bias_rows, bias=bias)
    if plan is not None:
        keep(key, plan)
    return out


def own_replay(launches: list, plan: Plan):
    """The plan as softmax_bench.launcher's Replay: its launches as Launches, run from C (the Plan kept for a
    profiler's hooks, which Triton's launch calls). The plan itself where a launch is not one the launcher takes
    (launcher.Unsupported, or a fact Launch or Replay refuses: the call then replays through Triton's launch, which
    test_launcher's GPU test would see)."""
    from . import launcher

    try:
        own = tuple(launcher.make_launch(compiled, grid, template, slots, plan.device_index)
                    for (_, grid, _, _, compiled), (_, template, slots) in zip(launches, plan.steps))
    except (launcher.Unsupported, TypeError, ValueError, OverflowError):
        return plan
    module = launcher.driver_bound()
    module.configure(*replay_glue())
    try:
        return module.Replay(own, plan, plan.stream_of, plan.device_index, None if plan.like_x else plan.out_dtype,
                             plan.scratch)
    except ValueError:  # more scratch buffers than launcher.c takes
        return plan


class PlanTable(dict):
    """PLANS: a dict that tells replayed.cpp of every change, so that its memo of the calls whose plans it found
    never serves one PLANS no longer holds under that key. replayed.cpp's configure(table, …) gives the table its
    forget()."""

    tells_changes = True  # what replayed.cpp's configure asks before it keeps a memo

    def forget(self) -> None:
        """Nothing, until replayed.cpp is configured with this table."""

    def __setitem__(self, key, plan) -> None:
        super().__setitem__(key, plan)
        self.forget()

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        self.forget()

    def clear(self) -> None:
        super().clear()
        self.forget()

    def pop(self, *args):
        self.forget()
        return super().pop(*args)

    def popitem(self):
        self.forget()
        return super().popitem()

    def setdefault(self, key, default=None):
        self.forget()
        return super().setdefault(key, default)

    def update(self, *args, **kwargs) -> None:
        super().update(*args, **kwargs)
        self.forget()

    def __ior__(self, other):
        self.update(other)
        return self


PLANS: dict[tuple, Plan] = PlanTable()  # with OWN_LAUNCHER, launcher.Replays where it takes the launches
# The keys of kinds called once: a kind's plan is made at its second call, so that a kind called only once (a
# decoding step's rows, a column wider each step) costs no plan (the recording, make_plan and the launcher's
# Launches: make_plan alone 12 µs of a CPU's host, docs/perf-notes.md, thirty-ninth and fortieth sessions).
CALLED_ONCE: set[tuple] = set()


def replayed(x, dim, dtype, scale, mask, causal, variant, log: bool, bias) -> torch.Tensor | None:
    """y of a call like a recorded one, its plan replayed: what softmax and log_softmax ask first (when not
    compiling), so that a replayed call runs no more Python than this. None for a call that goes the long way: one
    with a gradient to record (through the registered op's formula), a `dtype=` the kernels do not fuse (x cast
    first), one of a kind no plan was recorded for; the long way checks the arguments (a non-tensor x too)."""
    try:
        # dispatch.through_op's gradient and forward-mode tests, inlined: calling it costs this hot path 0.1 µs of
        # its 0.9 (CPU)
        if ((x.requires_grad or (bias is not None and bias.requires_grad)) and torch.is_grad_enabled()) or \
                forward_ad._current_level >= 0:
            return None
        out_dtype = None if dtype is None or dtype == x.dtype else dtype  # a cast fused into the store, or none
        if out_dtype is not None and (x.dtype, out_dtype) not in FUSED_CASTS:
            return None
        plan = PLANS.get(plan_key(x, dim, scale, mask, causal, variant, log, out_dtype, bias))
    except (AttributeError, TypeError, RuntimeError):  # RuntimeError: a tensor of no storage (torch.func.vmap's)
        return None
    return None if plan is None else plan(x, mask, bias)


def plan_key(x, dim, scale, mask, causal, variant, log: bool = False, out_dtype=None, bias=None) -> tuple:
    """What a call's launches depend on, beyond the tensors' memory (raises on arguments that are not tensors
    or not hashable: such a call is checked, and refused, the long way)."""
    return (variant, x.shape, x.stride(), x.dtype, x.get_device(), x.data_ptr() % 16, dim, scale, causal,
            None if mask is None else _layout(mask), log, out_dtype, None if bias is None else _layout(bias))


def backward_key(y, dy, dim, scale, mask, causal, variant, log: bool) -> tuple:
    """plan_key of a backward (dispatch.replayed_or_backward): its y's, dy's (in the bias's place, as its plan
    takes it) and the forward's arguments, apart from every forward's key."""
    return ("backward", *plan_key(y, dim, scale, mask, causal, variant, log, None, dy))


def _layout(t) -> tuple:
    """What a launch takes from a mask or bias beside its memory: its shape, strides, dtype, device, alignment."""
    return (t.shape, t.stride(), t.dtype, t.get_device(), t.data_ptr() % 16)


def keep(key: tuple, plan: Plan) -> None:
    if len(PLANS) >= MAX_PLANS:
        PLANS.clear()
    PLANS[key] = plan
    if cxx_wanted():
        replayed_from_cxx()


python_replayed = replayed


@cache
def replayed_from_cxx() -> bool:
    """Whether `replayed` is now replayed.cpp's (CXX_REPLAYED), serving the plans of PLANS, and the Replays' y
    allocated by its empty_like and their tensors' addresses read by its address_of; False, said once, where it
    cannot be built."""
    global replayed
    module = cxx_built()
    if module is None:
        return False
    module.configure(PLANS, FUSED_CASTS)
    replayed = module.replayed
    if OWN_LAUNCHER:
        from . import launcher

        if (own := launcher.built()) is not None:  # the Replays made already: theirs too
            own.configure(*replay_glue())
    return True


def cxx_wanted() -> bool:
    """Whether a kept plan switches `replayed` to replayed.cpp's: CXX_REPLAYED on, or unset where cxx_by_default."""
    return CXX_REPLAYED or (CXX_REPLAYED is None and cxx_by_default())


@cache
def cxx_by_default() -> bool:
    """Whether CXX_REPLAYED unset turns replayed.cpp on here: kernels launched on a GPU (not interpreted), and a
    Triton whose build helper builds C++."""
    from triton.runtime.build import compile_module_from_src

    return not kernels.interpreted() and builds_cxx(compile_module_from_src)


def replay_path() -> str:
    """How a call like a recorded one runs here, for `env` (host_us depends on it); nothing is built to say it."""
    if kernels.interpreted():
        return "not replayed: under Triton's interpreter every call takes the long way"
    if cxx_wanted():
        look_up = "looked up in C++ (replayed.cpp, built at the first replayed call)"
    elif CXX_REPLAYED is False:
        look_up = "looked up in Python (SOFTMAX_BENCH_CXX_REPLAYED=0)"
    else:
        import triton

        look_up = f"looked up in Python (Triton {triton.__version__}'s build helper builds C alone)"
    launch = ("launched by launcher.c (built at first use)" if OWN_LAUNCHER
              else "launched by Triton's launcher (SOFTMAX_BENCH_OWN_LAUNCHER=0)")
    return f"{look_up}, {launch}"


def replay_glue() -> tuple:
    """launcher.configure's arguments: how a Replay allocates y and reads the tensors' addresses (replayed.cpp's
    empty_like and address_of once `replayed` is its, else torch.empty_like and data_ptr()), the contiguous format,
    Triton's runtime knobs."""
    cxx = None if replayed is python_replayed else cxx_built()
    return (torch.empty_like if cxx is None else cxx.empty_like, torch.contiguous_format, _runtime_knobs(),
            None if cxx is None else cxx.address_of)


def builds_cxx(compile_module_from_src) -> bool:
    """Whether Triton's build helper takes a language (Triton 3.8's builds C++ too; 3.6's builds C alone)."""
    import inspect

    return "language" in inspect.signature(compile_module_from_src).parameters


def cxx_standard(version: str = torch.__version__) -> list[str]:
    """The -std flag torch's headers need past the C++17 Triton's helper builds with: torch ≥ 2.13's ATen requires
    C++20; an older torch's builds as C++17 too, with compilers that know no -std=c++20 (g++ < 10)."""
    major, minor = (int(part) for part in version.split(".")[:2])
    return ["-std=c++20"] if (major, minor) >= (2, 13) else []


@cache
def cxx_built():
    """replayed.cpp's module, built at first use with Triton's build helper (the system C++ compiler, Triton's cache)
    against the headers and libraries of the torch this runs with (its version in the source, so that another
    torch builds its own); None, said once, where it cannot be (no C++ compiler, no torch headers, a Triton whose
    helper builds C alone)."""
    import warnings
    from pathlib import Path

    try:
        import triton
        from triton.runtime.build import compile_module_from_src

        if not builds_cxx(compile_module_from_src):
            raise RuntimeError(f"Triton {triton.__version__}'s build helper builds C alone")
        source = (f"// torch {torch.__version__} {torch.version.git_version}\n"
                  + Path(__file__).with_name("replayed.cpp").read_text())
        libraries, headers = (os.path.join(os.path.dirname(torch.__file__), where) for where in ("lib", "include"))
        return compile_module_from_src(
            source, "softmax_bench_replayed", library_dirs=[libraries], include_dirs=[headers],
            libraries=["torch_python", "torch", "torch_cpu", "c10"], language="c++",
            ccflags=[*cxx_standard(), f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}",
                     f"-Wl,-rpath,{libraries}"])
    except Exception as e:  # no C++ compiler, no torch headers, a Triton without the helper's C++
        warnings.warn(f"softmax_bench: replayed.cpp could not be built ({type(e).__name__}: {e}); replayed calls are "
                      "looked up in Python", RuntimeWarning, stacklevel=2)
        return None


def bound_arguments(kernel, args: tuple, kwargs: dict) -> list:
    """A launch's arguments in the kernel's parameter order, constexprs included, as its compiled launcher takes
    them: the positional ones, then those named, then the parameters' defaults."""
    names, defaults = _parameters(kernel)[:2]
    return [*args, *map(kwargs.get, names[len(args):], defaults[len(args):])]  # map: 0.9 µs for fused's, not 1.7


@cache
def _parameters(kernel) -> tuple[tuple, tuple, tuple, frozenset]:
    """(names, defaults, constexpr flags, the set of names) of a @triton.jit kernel's parameters."""
    names = tuple(p.name for p in kernel.params)
    return (names, tuple(p.default for p in kernel.params),
            tuple(bool(getattr(p, "is_constexpr", False)) for p in kernel.params), frozenset(names))


# Launches bound without Triton's binder (issue 29). A `kernel[grid](...)` launch binds and specializes every
# argument and builds its cache key: on the H200's host, 35–60 µs a launch, over half of a cross_entropy call
# (evidence/experiments/2026-12-02-session16/ce-profile.txt), where a replayed launch costs ~5. With FAST_LAUNCHES, a
# launch whose arguments specialize as an earlier one's did goes to that launch's compiled kernel directly, as a
# replayed call's do: same kernel, grid, launch options, constexprs and bools (by value), integers (int_class),
# tensors (dtype, device and 16-byte alignment, what Triton specializes a pointer on) and the current device; floats
# by type. A call being recorded for replay launches so too: a call of a new kind pays no binding where an earlier
# launch specialized alike. On since the fortieth session, when the GPU suite's kernels and backward parts passed with
# it and a call of a new width cost the H200's host 120.6 µs against 146.4 without (docs/perf-notes.md);
# SOFTMAX_BENCH_FAST_LAUNCHES=0 turns it off.
FAST_LAUNCHES = os.environ.get("SOFTMAX_BENCH_FAST_LAUNCHES") != "0"
LAUNCHES: dict[tuple, tuple] = {}


def launch_key(kernel, grid, args: tuple, kwargs: dict, device: int) -> tuple[tuple, list] | None:
    """(what a launch's compiled kernel depends on on `device`, the current one; its arguments bound) or None where
    the launch is not one this path takes (a grid that is not a tuple)."""
    if type(grid) is not tuple:
        return None
    _, _, constexpr, known = _parameters(kernel)
    values = bound_arguments(kernel, args, kwargs)
    spec = []
    for value, fixed in zip(values, constexpr):
        kind = type(value)
        if kind not in PLAIN_VALUES and isinstance(value, torch.Tensor):
            spec.append((value.dtype, value.get_device(), value.data_ptr() % 16 == 0))
        elif fixed or (kind is not int and kind is not float):
            spec.append((kind, value))  # bool True and int 1 compile apart
        elif kind is int:
            spec.append(int_class(value))
        else:
            spec.append(float)
    options = tuple(sorted((k, v) for k, v in kwargs.items() if k not in known))  # num_warps, num_ctas, …
    return (kernel, grid, options, tuple(spec), device), values


def int_class(value: int) -> tuple:
    """What Triton specializes an integer argument on, or finer: its width (i32, i64, u64), whether it is 1 (a
    constant) and whether 16 divides it. Two integers alike in these run one compiled kernel, so a row width not
    seen before (a decoding step's keys, one longer each step) launches without Triton's binding."""
    return (int, value == 1, value % 16 == 0, -(1 << 31) <= value < 1 << 31, value >= 1 << 63)


def launch(kernel, grid, args: tuple, kwargs: dict):
    """kernel[grid](*args, **kwargs), through an earlier launch's compiled kernel where it specializes alike
    (FAST_LAUNCHES); returns the compiled kernel."""
    if kernels.interpreted():
        return kernel[grid](*args, **kwargs)
    device, stream_of = current_device()
    try:
        bound = launch_key(kernel, grid, args, kwargs, device)
        hit = LAUNCHES.get(bound[0]) if bound is not None else None
    except TypeError:  # an argument that cannot be hashed: Triton's own launch says what it makes of it
        bound = hit = None
    if hit is not None:
        run, compiled = hit
        run(stream_of(device), bound[1])
        return compiled
    compiled = kernel[grid](*args, **kwargs)
    if bound is not None and hasattr(compiled, "run") and hasattr(compiled, "packed_metadata"):
        if len(LAUNCHES) >= MAX_PLANS:
            LAUNCHES.clear()
        LAUNCHES[bound[0]] = (launcher(compiled, grid), compiled)
    return compiled


def current_device():
    """(the current device's index, index → its current stream), as Triton's own launch takes them."""
    from triton.runtime import driver

    return driver.active.get_current_device(), driver.active.get_current_stream
