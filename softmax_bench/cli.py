"""softmax-bench: how close to the hardware is a row softmax, where does it stop scaling, did a change slow it?

Thin Typer commands over the library: each parses options, calls one library function, prints.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from typer.core import TyperGroup

from . import __version__, _stop_while_starting
from .config import MEASURABLE, PASS_CHOICES, build_plan, preset_names
from .distributed import RANK_TIMEOUT_S
from .errors import BenchError, RankHung, RefusedByRank0
from .kernels import DTYPES
from .ops import OPS, laid_out_otherwise, op_label
from .regression import DEFAULT_HOST_THRESHOLD, DEFAULT_THRESHOLD

if signal.getsignal(signal.SIGINT) is _stop_while_starting:  # loaded: Ctrl-C is Python's again (__init__.py)
    signal.signal(signal.SIGINT, signal.default_int_handler)

try:  # typer ≥ 0.20 carries its own copy of click
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover
    from click.exceptions import UsageError


class Commands(TyperGroup):
    """A command's usage error (a value of the wrong type or range, a missing argument, an unknown command) is
    one line on stderr and exit 2, as every other error of the CLI."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except UsageError as e:
            # Typer ≥ 0.29 puts pydantic's "Value error, " before a choice's message
            fail(e.format_message().replace("Value error, ", ""))


app = typer.Typer(
    cls=Commands,
    help="How close to the hardware is a row softmax, where does it stop scaling, and did a change make it slower? "
    "Every measurement is compared with a device copy of the same bytes on the same GPU.\n\n"
    "Start with `softmax-bench sweep --dtype bf16` on a GPU, or `softmax-bench sweep --interpret` (tiny shapes) "
    "on a machine without one; then `show`, `plot`, `explain`, `check` and `compare` read the stored runs.\n\n"
    "Settings, from the environment (a run records those set in its meta.json, `env` lists them): "
    "SOFTMAX_BENCH_FORWARD_EVICT=plain (the forward kernels' loads plain, not evict_last); "
    "SOFTMAX_BENCH_IN_GRAPH=0 (torch.compile calls our op, not fused's kernel in its graph); "
    "SOFTMAX_BENCH_STATIC_LAUNCH=0 (Inductor launches our kernels in its graphs through Triton's launcher, not its "
    "static one); "
    "SOFTMAX_BENCH_FOLD_PROLOGUES=0 (a compiled softmax(x * c), softmax(x.masked_fill(~keep, -inf)) or "
    "softmax(x.float()) keeps Inductor's multiply, masked_fill or cast, not c as our scale, keep as our mask or "
    "fp32 as our dtype); "
    "SOFTMAX_BENCH_FUSE_CHAINS=0 (a compiled log_softmax(softmax(x) * c) of ours, or softmax(x + b), runs our kernels, "
    "one a call after Inductor's add, not torch ops Inductor fuses into one kernel a direction); "
    "SOFTMAX_BENCH_FAST_LAUNCHES=0 (a launch of a new kind bound by Triton, not through the compiled kernel of an "
    "earlier launch alike); "
    "SOFTMAX_BENCH_CXX_REPLAYED=0 (a replayed call's look-up, allocation and addresses in Python, not in the C++ "
    "built at first use with the system C++ compiler under Triton 3.8; =1 asks for it elsewhere too); "
    "SOFTMAX_BENCH_FINISH_PDL=0 (the loss's finishing kernel not a programmatic dependent of the cluster's); "
    "SOFTMAX_BENCH_AUTO_TABLES=DIR (where `tune` writes and auto reads its tables); "
    "SOFTMAX_BENCH_COMMIT=SHA (the commit a run records, for a tree without .git); "
    "SOFTMAX_BENCH_SWITCH=TEXT (recorded only: the Python a script ran to set a module's switch before the run, so "
    "that the run says it measured other code than its commit launches).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: paragraphs rewrapped to the terminal, no type after a flag
)
out = Console()
if not out.is_terminal:  # piped or captured: wide enough for a table with every variant
    out = Console(width=240)
err = Console(stderr=True, soft_wrap=True)


def _choices(name: str, values) -> type[Enum]:
    """The choices of an option, listed in --help and checked by the parser."""
    return Enum(name, {v: v for v in values}, type=str)


DtypeName = _choices("DtypeName", DTYPES)
MeasurableName = _choices("MeasurableName", MEASURABLE)
PresetName = _choices("PresetName", preset_names())
OpName = _choices("OpName", OPS)


def values(choices: list[Enum] | None) -> list[str]:
    return [c.value for c in choices or []]


OutDir = Annotated[Path, typer.Option("--out", help="Folder that holds runs and the copy baseline.")]
Interpret = Annotated[
    bool,
    typer.Option(
        "--interpret",
        help="Run everything on CPU through Triton's interpreter (TRITON_INTERPRET=1), timed by wall clock and "
        "labelled as interpreted: for machines with no GPU. Never compare such timings with GPU runs.",
    ),
]
Op = Annotated[
    Optional[OpName],
    typer.Option(
        "--op",
        help="What is fused around the softmax: softmax (default), scaled (x · 0.125 alone), scaled-masked (x · 0.125 "
        "and a random keep-mask of x's shape), causal (x · 0.125 under a bottom-right causal mask), key-padded "
        "(x · 0.125 and a mask row shared by 64 rows, as [B, 1, 1, S] over [B, H, S, S]), biased (x · 0.125 plus a "
        "random bias of x's shape and dtype: an attention bias), log-softmax "
        "(log_softmax(x)). Eager runs them as separate torch ops. cross-entropy: the mean loss of x's rows as "
        "logits (N the vocabulary; fused, eager, torch_compile, liger, quack); its backward pass is a training step.",
    ),
]
# The filters of show, compare and plot: the rows of these variants, dtypes, shapes and ops only
OnlyVariants = Annotated[Optional[list[MeasurableName]], typer.Option(
    "--variant", metavar="|".join(MEASURABLE), help="Only this variant or peer; repeatable.")]
OnlyDtypes = Annotated[Optional[list[DtypeName]], typer.Option(
    "--dtype", metavar="fp32|bf16|fp16", help="Only this dtype; repeatable.")]
OnlyShapes = Annotated[Optional[list[str]], typer.Option(
    "--shape", metavar="MxN", help="Only this shape, e.g. 8192x50257; repeatable.")]
OnlyOps = Annotated[Optional[list[OpName]], typer.Option(
    "--op", metavar="|".join(OPS), help="Only the rows of this op; repeatable.")]


def cell_filter(variants, dtypes, shapes, ops):
    """The rows show, compare and plot keep (softmax_bench.results.CellFilter)."""
    from .config import parse_shape
    from .results import CellFilter

    try:
        parsed = tuple(parse_shape(s) for s in shapes or [])
    except BenchError as e:
        raise BenchError(f"--shape: {e}") from None
    return CellFilter(tuple(values(variants)), tuple(values(dtypes)), parsed, tuple(values(ops)))


ShowFormat = _choices("ShowFormat", ["table", "md", "csv", "json"])
PassName = _choices("PassName", PASS_CHOICES)
MaskShape = Annotated[
    Optional[str],
    typer.Option(
        "--mask-shape", metavar="full|row|rows/K|period/K",
        help="How the mask of --op scaled-masked, or the bias of --op biased, lies over x's rows, as a user's "
        "broadcast one does: full (x's shape, the default), row (one row for all), rows/K (K consecutive rows share "
        "a row: a key-padding [B, 1, 1, S] mask over [B, H, S, S] scores, K = H·S), period/K (K rows repeated over "
        "the batch: an [S, S] mask, K = S); a K that does not divide M is taken as gcd(M, K), as the sweep says and "
        "rows.csv records. Read as it is, not expanded; the traffic model counts its own bytes.",
    ),
]
Pass = Annotated[
    Optional[PassName],
    typer.Option(
        "--pass",
        help="What to time: forward (default), backward (dx from y and dy: read y and dy, write dx — its % of copy "
        "counts those 3·M·N elements) or both.",
    ),
]
Dtypes = Annotated[
    Optional[list[DtypeName]],
    typer.Option("--dtype", metavar="|".join(DTYPES), help="Repeat for several. Default: the config's, else bf16 and "
                 "fp32."),
]


Shapes = Annotated[Optional[list[str]], typer.Option("--shape", metavar="MxN",
                                                    help="MxN, e.g. 32768x4096; repeatable.")]
Ms = Annotated[Optional[list[int]], typer.Option("--m", min=1, metavar="M",
                                                 help="Rows; with --n, every (m, n) pair. Repeatable.")]
Ns = Annotated[Optional[list[int]], typer.Option("--n", min=1, metavar="N", help="Row length; with --m. Repeatable.")]
ConfigFile = Annotated[Optional[Path], typer.Option("--config", help="A TOML sweep config, e.g. configs/ci.toml.")]
Preset = Annotated[
    Optional[PresetName],
    typer.Option("--preset", help="A sweep shipped with the package (softmax_bench/presets/): default is "
                 "M·N = 2^27 for N = 32 … 262144 and four vocabulary rows; smoke is tiny, for --interpret."),
]
WarmupMs = Annotated[Optional[int], typer.Option(min=0, help="Warm-up before each measurement, ms of GPU time.")]
RepMs = Annotated[Optional[int], typer.Option(min=1, help="Timed calls of each measurement, ms of GPU time in all.")]
MaxNoise = Annotated[Optional[float], typer.Option(
    min=0.0, metavar="PCT",
    help="Sample each measurement past --rep-ms until the relative noise of its median is at most PCT % (its standard "
         "error; up to 3 s of sampling a measurement, then the cell is marked !). Rows keep samples and noise_pct, "
         "and `check` gates on it. Default: 1 on a GPU (on the H200 it kept reruns of the default grid within 2 % "
         "at every cell, at --rep-ms's wall time), 0 under --interpret; 0: off, --rep-ms of samples.")]


def other_rank() -> str | None:
    """Under torchrun, this rank's number when it is not 0 (None otherwise): rank 0 alone prints progress and notes,
    since the run is its to write; the others print only their own errors."""
    rank = os.environ.get("RANK", "0")
    return rank if rank != "0" and "LOCAL_RANK" in os.environ else None


def fail(message: str, code: int = 2) -> None:
    rank = other_rank()
    err.print(f"error: {f'rank {rank}: ' if rank else ''}{message}", markup=False, highlight=False)
    raise typer.Exit(code)


def use_interpreter(interpret: bool) -> bool:
    """Set up Triton's interpreter when asked; refuse a GPU-less machine without it."""
    from .device import require_gpu_or_interpret

    if interpret and "softmax_bench.kernels.fused" in sys.modules:
        from .kernels import interpreted

        if not interpreted():  # and TRITON_INTERPRET stays unset: kernels loaded later would be interpreted too
            raise BenchError("the kernels were already compiled for the GPU in this process; run a new process")
    if interpret and os.environ.get("TRITON_INTERPRET") != "1":
        # Triton reads TRITON_INTERPRET once, when it is imported, and registering softmax_bench's ops as triton_ops
        # (softmax_bench.library) imported it: the same command again, in a process that has it set from the start
        os.environ["TRITON_INTERPRET"] = "1"
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *sys.orig_argv[1:]])
    require_gpu_or_interpret(interpret)
    from .kernels import interpreted

    if interpreted() and not interpret:
        raise BenchError("TRITON_INTERPRET=1 is set: add --interpret, or unset TRITON_INTERPRET to use the GPU")
    return interpret


def version_callback(value: bool) -> None:
    if value:
        out.print(f"softmax-bench {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool, typer.Option("--version", callback=version_callback, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """softmax-bench's commands (see --help)."""
    from .kernels import settings_problem

    if problem := settings_problem():
        fail(problem)


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("left"),
        TimeRemainingColumn(), console=err, transient=True, disable=other_rank() is not None,
    )


def _advanced(progress: Progress, task, what: str) -> None:
    """One measurement done: the bar moves on a terminal; elsewhere (a CI log, a pipe), where no bar is drawn, a
    plain line says which, how many of how many, and about how long is left."""
    progress.update(task, advance=1, description=what)
    if err.is_terminal or other_rank() is not None:
        return
    state = progress.tasks[task]
    left = f", about {state.time_remaining:.0f} s left" if state.time_remaining is not None else ""
    total = f"/{state.total:.0f}" if state.total else ""
    err.print(f"{state.completed:.0f}{total} {what}{left}", markup=False, highlight=False)


def _copy_baseline(dtypes, out_dir: Path, timing, interpret: bool, fresh: bool, save: bool = True) -> dict:
    from .baseline import copy_baseline
    from .kernels import DTYPES

    with _progress() as progress:
        task = progress.add_task("copy baseline", total=None)
        return copy_baseline(
            [DTYPES[d] for d in dtypes], out_dir, timing, interpret, fresh, save=save,
            on_measure=lambda dtype, nbytes: progress.update(task, description=f"copy {dtype} {nbytes / 2**20:,.0f} MB"),
            on_remeasure=lambda message: err.print(message, markup=False, highlight=False),
        )


@contextmanager
def _sweep_bar(name: str, lines: bool):
    """A sweep's progress as run_life.carry_out takes it: (on_start(total), advance(what)); lines: plain lines off a
    terminal too (_advanced), as one process's sweep gives them (a rank's bar alone)."""
    with _progress() as progress:
        task = progress.add_task(name, total=None)
        yield ((lambda total: progress.update(task, total=total)),
               (lambda what: _advanced(progress, task, what)) if lines
               else (lambda what: progress.update(task, advance=1, description=what)))


def _say(message: str) -> None:
    err.print(message, markup=False, highlight=False)


def _sweep_hooks():
    from .run_life import SweepHooks

    return SweepHooks(say=_say, progress=_sweep_bar, copy_baseline=_copy_baseline)


def _plan(shape, m, n, config, preset, dtype, variants: list[str], warmup_ms, rep_ms, op, interpret: bool,
          pass_=None, say: bool = True, max_noise=None, mask_shape=None, log=None):
    """The sweep asked for, checked before anything runs; says which preset runs when no shape was given (say:
    False in the process that starts the ranks: rank 0 says it)."""
    plan = build_plan(shape or [], m or [], n or [], config, preset.value if preset else None, values(dtype), variants,
                      warmup_ms, rep_ms, op.value if op else None, interpret, pass_.value if pass_ else None,
                      max_noise, mask_shape, log)
    if plan.default_preset is not None and other_rank() is None and say:
        why = "the default under --interpret" if interpret else "the default"
        err.print(f"no shape options: running the {plan.default_preset} preset, {why}: {plan.description}",
                  markup=False, highlight=False)
    return plan


@app.command("copy-baseline")
def copy_baseline_command(
    dtype: Annotated[Optional[list[DtypeName]],
                     typer.Option("--dtype", metavar="|".join(DTYPES),
                                  help="Repeat for several. Default: bf16 and fp32.")] = None,
    out_dir: OutDir = Path("results"),
    fresh: Annotated[bool, typer.Option("--fresh", help="Measure again even if this device has a stored one.")] = False,
    interpret: Interpret = False,
) -> None:
    """Measure device-to-device copy bandwidth (bytes read + written / median time) at sizes far past L2.

    Stored in OUT/copy-baseline.json with the device's identity (name, UUID, driver); `sweep` reuses it on the
    same device and measures it again on another one, or with --fresh.
    """
    from .config import DEFAULT_DTYPES
    from .report import copy_table
    from .timing import TimingSettings

    try:
        interpret = use_interpreter(interpret)
        baseline = _copy_baseline(values(dtype) or DEFAULT_DTYPES, out_dir, TimingSettings(), interpret, fresh)
    except BenchError as e:
        fail(str(e))
    out.print(copy_table(baseline))


@app.command()
def sweep(
    shape: Shapes = None,
    m: Ms = None,
    n: Ns = None,
    config: ConfigFile = None,
    preset: Preset = None,
    dtype: Dtypes = None,
    variant: Annotated[
        Optional[list[MeasurableName]],
        typer.Option("--variant", metavar="|".join(MEASURABLE),
                     help="A variant or peer to measure; repeatable. Default: all that support the cell."),
    ] = None,
    op: Op = None,
    mask_shape: MaskShape = None,
    log: Annotated[Optional[bool], typer.Option(
        "--log/--no-log", help="Time the log_softmax of the op (its scale, mask, bias or causal mask fused the same "
        "way) instead of its softmax; --op log-softmax is --op softmax --log.")] = None,
    pass_: Pass = None,
    out_dir: OutDir = Path("results"),
    run_id: Annotated[
        Optional[str], typer.Option("--run-id", help="Name the run folder (default: date-time-device).")
    ] = None,
    resume: Annotated[
        Optional[str], typer.Option("--resume", help="Finish an interrupted run (its folder or id): skip finished cells.")
    ] = None,
    fresh: Annotated[bool, typer.Option("--fresh", help="Measure the copy baseline again first.")] = False,
    warmup_ms: WarmupMs = None,
    rep_ms: RepMs = None,
    max_noise: MaxNoise = None,
    gpus: Annotated[
        Optional[str],
        typer.Option("--gpus", metavar="all|N", help="Measure on several GPUs at once: all, or a number. Starts the "
                     "sweep as that many ranks on this machine, as `torchrun --nproc-per-node=N -m softmax_bench "
                     "sweep …` does. Under --interpret, a number of ranks on the CPU."),
    ] = None,
    replicate: Annotated[
        bool, typer.Option("--replicate", help="With several GPUs: every GPU measures every cell (do they measure "
                           "alike?), instead of each measuring a share of the cells (faster).")
    ] = False,
    rank_timeout: Annotated[
        int, typer.Option("--rank-timeout", min=1, help="With several GPUs: seconds a GPU may take over one row "
                          "before it is named hung, its unmeasured cells FAIL and the sweep stops (exit 1).")
    ] = RANK_TIMEOUT_S,
    interpret: Interpret = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what the sweep would measure — each cell, the GPU "
                                          "memory it needs — and about how long it would take; measure nothing.")
                       ] = False,
) -> None:
    """Check and time every variant and peer on a grid of shapes; store the run under OUT/ and print its tables.

    Each cell is checked against a reference first (a wrong variant is FAIL and is not timed), then timed with CUDA
    events around each call (softmax_bench/timing.py: median, p20, p80). Bandwidth is compared with a device copy
    measured on the same device. Rows are written as each cell finishes: an interrupted sweep keeps them; finish
    it with --resume. With no shape options, the default preset runs (with --interpret, the smoke preset).
    --pass backward times the backward instead (our backward kernels, auto's, and the peers' through autograd),
    checked against dx computed from each one's own y. --dry-run says what would be measured, and measures nothing.

    On several GPUs (--gpus, or under torchrun), each GPU measures its copy baseline and a share of the cells, or
    every cell with --replicate; rank 0 writes one run whose rows name their device, and whose tables give, for a
    replicated run, the median over the GPUs, the spread between them, and a GPU that measures unlike the others.
    A GPU that fails has its unmeasured cells FAIL with the error, and the run says which one.
    """
    from . import distributed
    from .report import sweep_tables
    from .run_life import SweepInterrupted, SweepRequest, carry_out

    try:
        plan = ranks = None
        if not distributed.under_torchrun() and not dry_run:  # refused before this process is changed
            if gpus is not None:
                ranks = distributed.rank_count(gpus, interpret)
            elif replicate:
                how = "a number of ranks, e.g. --gpus 2 (ranks on the CPU)" if interpret else "--gpus all (or a number)"
                raise BenchError(f"--replicate: every device measures every cell, so it needs several: add {how}")
        if not dry_run:  # a dry run plans a sweep on any machine, and leaves the process as it was
            interpret = use_interpreter(interpret)
        if resume is not None:
            planned = {"--shape": shape, "--m": m, "--n": n, "--config": config, "--preset": preset, "--dtype": dtype,
                       "--variant": variant, "--op": op, "--mask-shape": mask_shape, "--log": log, "--pass": pass_,
                       "--warmup-ms": warmup_ms,
                       "--rep-ms": rep_ms, "--max-noise": max_noise, "--run-id": run_id}
            given = [name for name, value in planned.items() if value not in (None, [], ())]
            if given:
                raise BenchError(f"--resume finishes {resume} as it was planned, so {', '.join(given)} cannot go with "
                                 "it: drop them, or start a new sweep")
        if resume is None:
            plan = _plan(shape, m, n, config, preset, dtype, values(variant), warmup_ms, rep_ms, op, interpret,
                         pass_, say=ranks is None, max_noise=max_noise, mask_shape=mask_shape, log=log)
        if dry_run:
            if plan is None:
                raise BenchError("--dry-run says what a new sweep would measure; a --resume goes on with its run")
            _say_dry_run(plan, interpret)
            return
        request = SweepRequest(plan, resume, out_dir, interpret, shlex.join(["softmax-bench", *sys.argv[1:]]), fresh,
                               run_id, ranks, gpus, replicate, rank_timeout)
        outcome = carry_out(request, _sweep_hooks())
    except RefusedByRank0:
        raise typer.Exit(2) from None  # rank 0 says why
    except RankHung as e:
        fail(str(e), code=1)
    except BenchError as e:
        fail(str(e))
    except SweepInterrupted as e:
        _interrupted(e.run_path, interpret, e.ranks)
    except KeyboardInterrupt:  # before the run existed
        if not other_rank():
            err.print("interrupted before the run began: nothing was stored", markup=False, highlight=False)
        raise typer.Exit(130) from None
    if outcome.exit_code is not None:
        raise typer.Exit(outcome.exit_code)
    if outcome.run is None:
        return  # another rank: rank 0 prints the tables
    run, meta = outcome.run, outcome.meta
    for table in sweep_tables(run.rows(), meta):
        out.print(table)
    err.print(f"stored in {run.path}", markup=False, highlight=False)
    for trouble in distributed.device_troubles(meta):
        err.print(trouble, markup=False, highlight=False)
    if distributed.any_hung(meta):
        raise typer.Exit(1)


def _interrupted(run_path: Path, interpret: bool, ranks: int | None = None) -> None:
    """A sweep stopped by Ctrl-C (or, on ranks, by another's failure): where its finished cells are, and the exact
    command that finishes them; exit 130."""
    again = shlex.join(["softmax-bench", "sweep", "--resume", str(run_path), *(["--gpus", str(ranks)] if ranks else []),
                        *(["--interpret"] * interpret)])
    fail(f"interrupted: finished cells are kept in {run_path}; finish them with `{again}`", code=130)


def _say_dry_run(plan, interpret: bool) -> None:
    from rich.table import Table

    from .sweep import dry_run
    from .timing import SAMPLING_TIMEOUT_MS

    cells, seconds = dry_run(plan, interpret)
    shaped = any(cell["mask_shape"] for cell in cells)  # an op that lays a mask or bias out over rows
    table = Table("dtype", "M×N", *(["mask shape"] if shaped else []), "variants and peers", "GPU memory",
                  title=f"sweep --dry-run: {len(cells)} cells, op {op_label(plan.op, plan.mask_shape, plan.log)}, "
                  f"{' and '.join(plan.passes)}")
    for cell in cells:
        table.add_row(cell["dtype"], f"{cell['M']}×{cell['N']}", *([cell["mask_shape"]] if shaped else []),
                      str(cell["measures"]), f"{cell['memory_gb']:.2f} GB")
    out.print(table)
    if note := laid_out_otherwise(plan.op, plan.mask_shape, [cell["M"] for cell in cells]):
        out.print(note, markup=False)
    if seconds is None:
        eta = "not estimated under --interpret (the CPU sets the pace)"
    else:
        took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
        eta = (f"about {took} on a GPU of timing alone, compiling and checking on top (warm-up "
               f"{plan.timing.warmup_ms} ms, repetitions {plan.timing.rep_ms} ms a measurement)")
        if plan.timing.max_noise is not None:
            eta += (f", and up to {SAMPLING_TIMEOUT_MS / 1000:g} s more a measurement to bring its noise to "
                    f"{plan.timing.max_noise:g} %")
    out.print(f"{sum(c['measures'] for c in cells)} measurements; {eta}; nothing was measured", markup=False)


@app.command()
def tune(
    shape: Shapes = None,
    m: Ms = None,
    n: Ns = None,
    config: ConfigFile = None,
    preset: Preset = None,
    dtype: Dtypes = None,
    table: Annotated[
        Optional[Path],
        typer.Option("--table", help="Where to write the table. Default: the folder `auto` reads first "
                     "($SOFTMAX_BENCH_AUTO_TABLES, else ~/.cache/softmax-bench/auto-tables), named after the GPU and Triton."),
    ] = None,
    warmup_ms: WarmupMs = None,
    rep_ms: RepMs = None,
    op: Annotated[Optional[OpName], typer.Option(
        "--op", help="The form to measure: softmax (the default), causal or scaled-masked (a keep-mask). A fused "
        "form's entries join the table's others; auto picks for causal or masked calls from them where they exist, "
        "else from the plain softmax's.")] = None,
    interpret: Interpret = False,
) -> None:
    """Measure which Triton variant is fastest on this GPU, per dtype and row width: the table `auto` picks from.

    Every Triton variant that supports a cell is checked, then timed (softmax_bench/timing.py's median); the
    fastest correct one is the cell's entry. `auto` then runs, for rows of N elements, the entry for N, else the
    one of the nearest width measured; with no table for the GPU and this Triton, cluster from N = 32768 where
    it runs, else fused while the row fits in registers, else two_pass. Tables are per GPU and Triton version:
    the package ships the H200's for Triton 3.6 and 3.8 and the H100's for 3.8 (softmax_bench/auto_tables/); a
    table you write here takes precedence on your GPU under this Triton. With no shape options, the default
    preset's shapes.
    """
    from .auto_table import table_for, table_name, triton_version, user_tables_dir
    from .dispatch import clear_caches
    from .report import tune_table
    from .tune import tune as tune_cells

    try:
        interpret = use_interpreter(interpret)
        plan = _plan(shape, m, n, config, preset, dtype, [], warmup_ms, rep_ms, op, interpret)
        command = shlex.join(["softmax-bench", *sys.argv[1:]])
        with _progress() as progress:
            task = progress.add_task("tune", total=None)
            result = tune_cells(plan, interpret, command, advance=lambda what: progress.update(task, description=what))
        path = table or user_tables_dir() / table_name(result.device, triton_version())
        # a fused form's entries join the table auto reads now (the user's, else the shipped one): its others stay
        older = _readable_table(path) or table_for(result.device, triton_version())
        measured, forms = len(result.entries), result.forms()
        result = result.merged_into(older)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(result.to_json())
        except OSError as e:
            raise BenchError(f"cannot write the table to {path}: {e.strerror}; choose another with --table") from None
        clear_caches()
    except BenchError as e:
        fail(str(e))
    if len(result.entries) > measured:  # said once the table is written: a refused write is one line
        kept = ", ".join(sorted(result.forms() - forms))
        err.print(f"kept the {kept} entries of {older.source}", markup=False, highlight=False)
    out.print(tune_table(result))
    err.print(f"table written to {path}", markup=False, highlight=False)


def _readable_table(path: Path):
    """The table at path, if there is one that reads (tune keeps its other forms' entries), else None."""
    from .auto_table import read_table

    try:
        return read_table(path) if path.is_file() else None
    except (OSError, ValueError, KeyError):
        return None


@app.command()
def env(out_dir: OutDir = Path("results"), interpret: Interpret = False) -> None:
    """Print what a bug report needs: Python, torch, Triton and the peers installed, the SOFTMAX_BENCH_* settings
    in effect, the GPU (name, compute capability, SMs, memory, driver, CUDA), whether the cluster variant runs
    here, how a replayed call runs (its look-up and launcher: what host_us measures), the auto table in use and
    this device's stored copy baseline."""
    from rich.table import Table

    from .device import environment

    if interpret:  # else the machine as it is, a GPU or none: this is what a bug report from it needs
        use_interpreter(interpret)
    table = Table("what", "value", title="softmax-bench environment", show_header=False)
    for what, value in environment(out_dir, interpret):
        table.add_row(what, value)
    out.print(table)


@app.command()
def runs(
    out_dir: OutDir = Path("results"),
    last: Annotated[int, typer.Option("--last", min=1, help="Show this many of the newest runs.")] = 20,
) -> None:
    """List the stored runs under OUT, newest first: when each started, its device and Triton, what it measured
    (op, pass, cells timed), its commit and how it ended."""
    from rich.table import Table

    from .results import run_summary, stored_runs

    found = stored_runs(out_dir)
    if not found:
        fail(f"no runs in {out_dir}; `softmax-bench sweep --out {out_dir}` makes one")
    columns = ["run", "started", "device", "triton", "op", "pass", "cells", "commit", "status"]
    table = Table(*columns, title=f"runs in {out_dir}, newest first ({min(last, len(found))} of {len(found)})")
    for run in found[:last]:
        summary = run_summary(run)
        table.add_row(*(summary.get(c, "") for c in columns))
    out.print(table)


@app.command()
def show(
    run: Annotated[str, typer.Argument(metavar="RUN", help="A run folder, or a run id under OUT.")],
    out_dir: OutDir = Path("results"),
    variant: OnlyVariants = None,
    dtype: OnlyDtypes = None,
    shape: OnlyShapes = None,
    op: OnlyOps = None,
    format_: Annotated[ShowFormat, typer.Option(
        "--format", help="table: as the sweep printed them; md: the same tables in Markdown (a CI summary, a review); "
        "csv: the rows; json: the metadata and the rows.")] = ShowFormat["table"],
) -> None:
    """Print a stored run's tables again (--variant, --dtype, --shape, --op: of those cells only), or the run as
    Markdown, CSV or JSON (--format).

    A run on several GPUs ends with a table of them (copy bandwidth, rows timed, how each ended). A replicated run
    shows each cell's median over the GPUs, with Δ, how far the slowest GPU's GB/s is under the fastest's; its GPU
    table gives each GPU against the others and names an outlier (more than 2 % from them at the median).
    """
    from .report import run_as_text, sweep_tables
    from .results import open_run

    try:
        stored = open_run(run, out_dir)
        rows = cell_filter(variant, dtype, shape, op).apply(stored.nonempty_rows(), f"run {stored.id}")
        meta = stored.meta()
    except BenchError as e:
        fail(str(e))
    if format_.value == "table":
        for table in sweep_tables(rows, meta):
            out.print(table)
    else:
        sys.stdout.write(run_as_text(rows, meta, format_.value))


@app.command()
def plot(
    runs: Annotated[list[str], typer.Argument(metavar="RUN...", help="A run folder, or a run id under OUT; with "
                                              "two or more, the speed-up of each later one over the first.")],
    out_dir: OutDir = Path("results"),
    to: Annotated[Optional[Path], typer.Option("--to", metavar="FOLDER",
                                               help="Write the figures here instead of beside the run.")] = None,
    variant: OnlyVariants = None,
    dtype: OnlyDtypes = None,
    shape: OnlyShapes = None,
    op: OnlyOps = None,
) -> None:
    """Write the run's roofline, bandwidth-vs-N and registers-vs-N plots beside it, or into --to (PNG and SVG; the
    same run gives the same bytes, so re-plotting a committed run changes no file).

    Each variant has one colour and one marker in every panel of every plot; peers (torch's and others') are
    drawn hollow and dashed. Roofline: achieved GFLOP/s of the op's useful FLOPs (the same for every variant)
    against useful FLOPs per HBM byte (each variant's traffic model), under one roof: the
    smaller of the run's copy bandwidth × intensity and the device's measured fp32 rate, with its ridge point; a
    point above the roof is ringed and the legend says why. Bandwidth vs N: % of copy, one panel per dtype — the
    drop where a variant stops scaling. Registers vs N: registers a thread and spills of each Triton variant's
    compiled kernel (an interpreted run compiles none, and the figure says so). A run on several GPUs is drawn by
    each cell's median over its GPUs. --variant, --dtype, --shape and --op draw only those cells.

    `plot A B`: speedup-vs-n, B's GB/s over A's at each cell both timed (the picture a review of a change wants),
    one line per variant; beside B, or into --to. More runs: one line each, over A.
    """
    from .plots import plot_comparison, plot_run
    from .results import open_run

    try:
        opened = [open_run(r, out_dir) for r in runs]
        cells = cell_filter(variant, dtype, shape, op)
        paths = plot_run(opened[0], to, cells) if len(opened) == 1 else plot_comparison(opened, to, cells)
    except BenchError as e:
        fail(str(e))
    for path in paths:
        out.print(str(path), markup=False, highlight=False)


@app.command()
def explain(
    shape: Annotated[str, typer.Option("--shape", help="MxN, e.g. 32768x4096.")],
    dtype: Annotated[DtypeName, typer.Option("--dtype")] = DtypeName["fp32"],
    measure: Annotated[bool, typer.Option("--measure", help="Also time each variant and show it beside the prediction.")] = False,
    op: Op = None,
    mask_shape: MaskShape = None,
    out_dir: OutDir = Path("results"),
    interpret: Interpret = False,
    from_run: Annotated[Optional[str], typer.Option(
        "--run", metavar="RUN", help="Explain for the GPU of a stored run (folder or id): its copy bandwidth, its "
        "fp32 rate and its auto table, on any machine; nothing is compiled or timed here.")] = None,
) -> None:
    """The byte arithmetic of one shape, predicted (and measured with --measure).

    Bytes each variant reads and writes and the time that takes at the stored copy bandwidth; why the FLOPs do not
    matter; the fused kernel's BLOCK, warps and registers; which variant auto picks, and why. --run takes all of
    that from a stored run instead of this machine: an H200 explained on a laptop.
    """
    from .config import check_interpretable, parse_shape
    from .ops import get_op

    try:
        try:
            M, N = parse_shape(shape)
        except BenchError as e:
            raise BenchError(f"--shape: {e}") from None
        the_op = get_op(op.value if op else "softmax")
        mask_shape = the_op.check_mask_shape(mask_shape or "full")
        if interpret and measure:
            check_interpretable(M, N, "explain --measure")
        stored = None
        if from_run is not None:
            if measure:
                raise BenchError("--measure times on this machine and --run explains another's GPU: give one of them")
            from .results import open_run

            stored = open_run(from_run, out_dir)
        else:
            interpret = use_interpreter(interpret)
        from .explain import explain as explain_shape  # loads the kernels: after use_interpreter
        from .report import explain_report

        if op is not None and op.value == "cross-entropy":
            if measure:
                raise BenchError("--measure times softmax variants; time the cross-entropy with `sweep --op "
                                 "cross-entropy`")
            from .explain import explain_loss
            from .report import loss_explain_report

            for item in loss_explain_report(explain_loss(M, N, dtype.value, out_dir, interpret, run=stored)):
                out.print(item)
            return
        with _progress() as progress:
            task = progress.add_task("explain", total=None)
            explanation = explain_shape(M, N, dtype.value, out_dir, interpret, measure, op=the_op,
                                        advance=lambda what: progress.update(task, description=what), run=stored,
                                        mask_shape=mask_shape)
    except BenchError as e:
        fail(str(e))
    for item in explain_report(explanation):
        out.print(item)


@app.command()
def check(
    run: Annotated[str, typer.Argument(metavar="RUN", help="The run to judge (folder or id).")],
    baseline: Annotated[str, typer.Option("--baseline", help="The reference run (folder or id).")],
    threshold: Annotated[
        float, typer.Option(min=0.0, help="Smallest drop in % of copy, relative, that counts.")
    ] = DEFAULT_THRESHOLD,
    host_threshold: Annotated[float, typer.Option(
        min=0.0, help="Smallest rise, in %, of a variant's host µs a call (per µs of its copy's host time, measured "
        "in the same run; the median over the variant's cells) that counts as a host-cost regression.")
    ] = DEFAULT_HOST_THRESHOLD,
    markdown: Annotated[Optional[Path], typer.Option(
        "--summary", "--markdown", metavar="FILE", help="Also write a Markdown summary here, regressions first (a CI "
        "job appends it to $GITHUB_STEP_SUMMARY).")] = None,
    allow_device_mismatch: Annotated[
        bool, typer.Option("--allow-device-mismatch", help="Compare runs from different GPU models.")
    ] = False,
    allow_missing: Annotated[Optional[str], typer.Option(
        "--allow-missing", metavar="WHY",
        help="Accept cells that were ok in the baseline and are missing, skipped or FAIL now; WHY is printed.")] = None,
    out_dir: OutDir = Path("results"),
) -> None:
    """Exit 1 if a kernel got slower than the baseline, a cell FAILs its correctness check, or a cell ok in the
    baseline is missing, skipped or FAIL in the run (unless --allow-missing says why), or the run is empty. A FAIL
    of torch's or a peer's own code (eager, torch_compile, liger, quack) new in the run is reported, not gated.

    Each cell is taken as % of a copy of its own bytes, measured in its run. A regression is a drop larger than
    its gate: --threshold plus 3 times the two medians' noise in quadrature (noise_pct, the median's standard
    error, kept by runs since the noise rule), or, for older runs, plus the cell's own spread (the wider p20–p80
    band of the two runs, in % of its median) with the p20–p80 bands apart. A run on several GPUs is taken by
    each cell's median over its GPUs, so it can be checked against a run of one GPU (and the other way round); a
    FAIL on any GPU counts. A cell timed while the GPU throttled (its SM clock under 75 % of its maximum, in either
    run) is named and not gated; so is one whose copy moved buffers off a 4096-byte page in an older run (up to 30 %
    slower) and whole pages in the other. The host's cost of a call is gated as well, per variant and pass: each cell's
    host µs is taken per µs of its copy's host time in the same run, and a variant whose median over its cells of
    that ratio's rise is past --host-threshold regressed (one cell's host time is too noisy to gate; runs from
    before copy_host_us are not host-gated). Exit 0: nothing regressed; 1: a regression, a FAIL, a lost cell or an
    empty run; 2: unusable input (unreadable runs, different GPU models without --allow-device-mismatch, an
    interpreted run: it timed the CPU, not a kernel).
    """
    from .regression import check as check_runs
    from .regression import check_markdown
    from .report import check_table, listed
    from .results import open_run

    try:
        current, base = open_run(run, out_dir), open_run(baseline, out_dir)
        result = check_runs(current, base, threshold, allow_device_mismatch, allow_missing, host_threshold)
        if markdown is not None:
            try:
                markdown.write_text(check_markdown(result, current, base))
            except OSError as e:
                raise BenchError(f"cannot write {markdown}: {e.strerror or e}") from None
    except BenchError as e:
        fail(str(e))
    out.print(check_table(result, current.id, base.id))
    if result.throttled:
        err.print(f"not gated, the GPU throttled while they were timed: {listed(result.throttled)}; "
                  "measure them again on a cool, unthrottled GPU", markup=False, highlight=False)
    if result.repriced:
        err.print(f"not gated, their copy was timed on buffers off a 4096-byte page in one run (a memcpy up to 30 % "
                  f"slower) and on whole pages in the other: {listed(result.repriced)}; measure the older run again "
                  "with this softmax-bench to compare them", markup=False, highlight=False)
    if result.exit_code:
        names = ", ".join(c.cell for c in result.regressions) or "none"
        host_groups = [f"{g.name} ({g.change:+.0f} %, the median of {len(g.cells)} cells)"
                       for g in result.host_regressions]
        host = f"; host-cost regressions: {listed(host_groups)}" if result.host_regressions else ""
        lost = ""
        if result.missing and not result.allow_missing:
            lost = (f"; lost since the baseline: {listed(result.missing)}"
                    f"{' (' + result.lacks + ')' if result.lacks else ''}; if that is meant, pass --allow-missing WHY")
        empty = "the run has no rows; " if result.empty else ""
        err.print(f"{empty}regressions: {names}{host}; FAIL cells: {len(result.failures)}{lost}", markup=False,
                  highlight=False)
        raise typer.Exit(result.exit_code)


@app.command()
def compare(
    runs: Annotated[list[str], typer.Argument(
        metavar="RUN", help="Two or more runs (folders or ids); the first is the reference.")],
    out_dir: OutDir = Path("results"),
    variant: OnlyVariants = None,
    dtype: OnlyDtypes = None,
    shape: OnlyShapes = None,
    op: OnlyOps = None,
) -> None:
    """Runs side by side (two commits, two GPUs): GB/s and % of copy per cell, and the ratio to the first run.

    A run on several GPUs counts by each cell's median over its GPUs. --variant, --dtype, --shape and --op compare
    only those cells.
    """
    from .regression import compare as compare_runs
    from .regression import run_labels
    from .report import compare_table
    from .results import open_run

    if len(runs) < 2:
        fail("compare needs at least two runs")
    try:
        opened = [open_run(r, out_dir) for r in runs]
        frame = compare_runs(opened, cell_filter(variant, dtype, shape, op))
    except BenchError as e:
        fail(str(e))
    out.print(compare_table(frame, run_labels(opened)))
