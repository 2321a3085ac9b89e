"""A run's life: a new run's folder and metadata (its device, commit, timing, copy baseline and plan), the plan read
back from a stored run, a stored run taken up again to finish it, and a sweep carried out from start to end — in
this process, as one of torchrun's ranks, or by starting ranks here (`carry_out`)."""

from __future__ import annotations

import os
import subprocess
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import device as devices
from .config import SweepPlan, parse_shape
from .dispatch import table_in_use
from .errors import BenchError
from .ops import FUSED_OPS, laid_out_otherwise
from .providers import providers
from .results import Run, new_run, open_run
from .timing import TimingSettings


def now_stamp() -> str:
    """The time as a run's metadata records it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def git_commit() -> str | None:
    """The code a run measured: SOFTMAX_BENCH_COMMIT when set (a copy of the tree may carry a stale .git), else
    the checkout's commit (with '-dirty' when the tree has changes), else GITHUB_SHA when set, else None."""
    if os.environ.get("SOFTMAX_BENCH_COMMIT"):
        return os.environ["SOFTMAX_BENCH_COMMIT"]
    root = Path(__file__).resolve().parent.parent
    from_env = os.environ.get("GITHUB_SHA")
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if commit.returncode != 0:
            return from_env
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return from_env
    return commit.stdout.strip() + ("-dirty" if dirty else "")


def plan_to_meta(plan: SweepPlan) -> dict:
    return {"shapes": [f"{m}x{n}" for m, n in plan.shapes], "dtypes": plan.dtypes, "variants": plan.variants,
            "op": plan.op, "mask_shape": plan.mask_shape, "log": plan.log, "passes": plan.passes,
            "sources": plan.sources}


def plan_from_meta(meta: dict) -> SweepPlan:
    stored = meta["plan"]
    return SweepPlan(
        shapes=[parse_shape(s) for s in stored["shapes"]],
        dtypes=stored["dtypes"],
        variants=stored["variants"],
        timing=TimingSettings(meta["timing"]["warmup_ms"], meta["timing"]["rep_ms"], meta["timing"].get("l2", "clean"),
                              meta["timing"].get("max_noise")),
        op=stored.get("op", "softmax"),
        mask_shape=stored.get("mask_shape", "full"),
        log=stored.get("log", False),
        passes=stored.get("passes", ["forward"]),
        sources=stored["sources"],
    )


# Other projects' variables that change what a row of ours measures: Inductor's launch of user-defined Triton
# kernels through its static launcher, softmax_bench's in a compiled graph (compiled_op's host µs a call).
INDUCTOR_STATIC_LAUNCH = "TORCHINDUCTOR_STATIC_LAUNCH_USER_DEFINED_TRITON_KERNELS"
OTHER_SETTINGS = (INDUCTOR_STATIC_LAUNCH,)
# Recorded only, read by nothing here: the Python a script ran before the sweep to set a module's switch otherwise than
# the code does (evidence/experiments/device-step.sh's SWEEP_SET). Such a run measured other code than the commit it
# names launches, and scripts/bar-status.py leaves it out.
SWITCH_SETTING = "SOFTMAX_BENCH_SWITCH"


def project_settings() -> dict[str, str]:
    """The SOFTMAX_BENCH_* variables of this process's environment: the switches that change what a variant runs
    (IN_GRAPH, FAST_LAUNCHES, FORWARD_EVICT) or which table auto reads, so that a run says what it was made with;
    and those of OTHER_SETTINGS that are set."""
    return {name: value for name, value in sorted(os.environ.items())
            if name.startswith("SOFTMAX_BENCH_") or name in OTHER_SETTINGS}


def settings_text() -> str:
    """project_settings() as one line, NAME=value separated by spaces ("" where none is set)."""
    return " ".join(f"{name}={value}" for name, value in project_settings().items())


def start_run(plan: SweepPlan, out_dir: Path, baseline: dict, interpret: bool, command: str,
              run_id: str | None = None, rank_devices: list[dict] | None = None,
              replicate: bool = False) -> tuple[Run, dict]:
    """A new run folder with its metadata written before the first cell. A run on several devices (ranks under
    torchrun) lists them in `devices` (device, copy bandwidth and how it ended, one entry a rank) and says whether
    they share out the cells or each measure every cell (`placement`: sharded or replicated); `device` and
    `copy_gbps` are then rank 0's."""
    device = baseline["device"]
    label = device["name"].split("(")[0].replace("NVIDIA", "") + ("-interpreted" if interpret else "")
    if rank_devices is not None:
        label += f"-x{len(rank_devices)}"
    run = new_run(out_dir, label, run_id)
    meta = {
        "run_id": run.id,
        "started_at": now_stamp(),
        "finished_at": None,
        "command": command,
        "interpreted": interpret,
        "device": device,
        "git_commit": git_commit(),
        "timing": plan.timing.describe(interpret),
        "copy_gbps": dict(baseline["reference_gbps"]),
        "copy_per_cell": True,  # pct_of_copy: against a copy of each cell's bytes, timed in the run
        "copy_pages": True,  # that copy's buffers whole 4096-byte pages (baseline.copy_buffers)
        # a fused op's expected_ms: its bytes at the bandwidth of a copy of its floor's bytes (sweep.roofline_bytes),
        # timed in the run; before, at the bandwidth of the copy of x and y, prorated
        "roofline": "copy of the floor's bytes",
        "auto_table": table_in_use(),
        "settings": project_settings(),
        "copy_baseline": {k: baseline[k] for k in ("measured_at", "copies", "reference_gbps", "fp32_flops")},
        "op": plan.op,
        "mask_shape": plan.mask_shape,
        "log": plan.log,
        "passes": plan.passes,
        "plan": plan_to_meta(plan),
    }
    if rank_devices is not None:
        meta.update(placement="replicated" if replicate else "sharded", devices=rank_devices)
    run.write_meta(meta)
    return run, meta


def resume_run(ref: str, out_dir: Path, interpret: bool,
               on_ranks: bool = False) -> tuple[Run, dict, SweepPlan, str | None]:
    """A stored run to finish, with the plan it was started with, and the last line of its rows dropped because a
    kill cut it short (None when there was none). A run measured on several devices is finished on ranks
    (on_ranks: softmax_bench.distributed checks that they hold the same devices), a one-device run in one process."""
    run = open_run(ref, out_dir)
    meta = run.meta()
    try:
        plan = plan_from_meta(meta)
        providers(plan.variants, plan.passes, plan.op)
        if not all(dtype in meta["copy_gbps"] for dtype in plan.dtypes):
            raise KeyError("copy_gbps")
    except (KeyError, TypeError, AttributeError, BenchError) as err:
        raise BenchError(f"{run.meta_path} is damaged ({type(err).__name__}: {err}): run {run.id} cannot be resumed; "
                         "start a new sweep") from None
    if meta.get("op", "softmax") in FUSED_OPS and "roofline" not in meta:
        raise BenchError(f"run {run.id} priced its cells at the bandwidth of the copy of x and y (a run from before "
                         "meta.json's roofline); the rest would be priced at a copy of each cell's own bytes: start "
                         "a new sweep")
    if meta.get("interpreted") != interpret:
        mode = "with" if meta.get("interpreted") else "without"
        raise BenchError(f"run {run.id} was measured {mode} --interpret; resume it the same way")
    if "devices" in meta and not on_ranks:
        count = len(meta["devices"])
        raise BenchError(f"run {run.id} was measured on {count} devices; resume it on them: "
                         f"softmax-bench sweep --resume {run.id} --gpus {count}")
    if on_ranks and "devices" not in meta:
        raise BenchError(f"run {run.id} was measured on one device; resume it in one process, without --gpus or "
                         "torchrun")
    if not on_ranks and not interpret and not devices.same_device(meta.get("device", {}), devices.device_info(False)):
        raise BenchError(f"run {run.id} was measured on another device ({meta['device'].get('name')}); "
                         "start a new sweep here instead")
    if not on_ranks:  # rewritten as it was: a folder that cannot be written is said now, before any measurement
        run.write_meta(meta)
    return run, meta, plan, run.drop_cut_line()


@dataclass(frozen=True)
class SweepRequest:
    """A sweep as asked for: a new plan, or a stored run to finish (`resume`: its folder or id), and how to run it:
    in this process, on `ranks` processes started here (--gpus), or as one of torchrun's ranks (found from the
    environment; `gpus` as given, to say which devices)."""

    plan: SweepPlan | None
    resume: str | None
    out_dir: Path
    interpret: bool
    command: str
    fresh: bool
    run_id: str | None
    ranks: int | None
    gpus: str | None
    replicate: bool
    rank_timeout: int  # s: a rank may take this long over a row before it is named hung


Progress = Callable[[str, bool], AbstractContextManager]  # (name, plain lines off a terminal) → (on_start, advance)


@dataclass(frozen=True)
class SweepHooks:
    """What a sweep shows its user (the CLI's console): `say` a line; `progress` a bar, a context manager yielding
    (on_start(total), advance(what)); `copy_baseline(dtypes, out_dir, timing, interpret, fresh, save)` the copy
    baseline, measured or read with its own progress."""

    say: Callable[[str], None]
    progress: Progress
    copy_baseline: Callable[..., dict]


@dataclass(frozen=True)
class SweepOutcome:
    """A sweep carried out: its run and final metadata (None on a rank other than 0, which prints nothing), or the
    exit status of the ranks it started here."""

    run: Run | None = None
    meta: dict | None = None
    exit_code: int | None = None


class SweepInterrupted(Exception):
    """Ctrl-C (or, on ranks, another rank's failure) stopped a sweep whose run exists: its folder, and the ranks it
    ran on (None: one process), for the command that finishes it."""

    def __init__(self, run_path: Path, ranks: int | None = None):
        super().__init__(str(run_path))
        self.run_path, self.ranks = run_path, ranks


def carry_out(request: SweepRequest, hooks: SweepHooks) -> SweepOutcome:
    """The sweep from its first cell to its last: a new run started (its copy baseline first) or a stored one taken
    up, its cells measured and its metadata finished; under torchrun, this rank's share of it; with request.ranks,
    that many ranks started here, which do the rest. Raises SweepInterrupted when stopped once its run exists."""
    from . import distributed
    from .sweep import run_sweep

    if distributed.under_torchrun():
        return _on_this_rank(request, hooks)
    if request.ranks is not None:
        if request.resume is not None:
            open_run(request.resume, request.out_dir)  # a missing run is said here, before any process starts
        return SweepOutcome(exit_code=distributed.launch(request.ranks))
    if request.resume is not None:
        run, meta, plan, dropped = resume_run(request.resume, request.out_dir, request.interpret)
        if dropped:
            hooks.say(dropped_line(run, dropped))
    else:
        plan = request.plan
        baseline = hooks.copy_baseline(plan.dtypes, request.out_dir, plan.timing, request.interpret, request.fresh,
                                       True)
        run, meta = start_run(plan, request.out_dir, baseline, request.interpret, request.command, request.run_id)
    hooks.say(f"run {run.id} → {run.path}")
    if note := laid_out_otherwise(plan.op, plan.mask_shape, [M for _, M, _ in plan.cells()]):
        hooks.say(note)
    try:
        with hooks.progress("sweep", True) as (on_start, advance):
            meta = run_sweep(plan, run, meta, request.interpret, on_start=on_start, advance=advance)
    except KeyboardInterrupt:
        raise SweepInterrupted(run.path) from None
    return SweepOutcome(run, meta)


def _on_this_rank(request: SweepRequest, hooks: SweepHooks) -> SweepOutcome:
    """This rank's part of a sweep under torchrun: the run and its final metadata on rank 0, nothing elsewhere."""
    from . import distributed

    rank = distributed.this_rank(request.interpret, request.gpus)
    baseline = None
    if request.resume is None:  # measured here, not saved: rank 0 saves every rank's
        plan = request.plan
        baseline = hooks.copy_baseline(plan.dtypes, request.out_dir, plan.timing, request.interpret, request.fresh,
                                       False)
    with distributed.joined(request.rank_timeout) as store:
        start = distributed.start(rank, request.plan, request.resume, baseline, request.out_dir, request.interpret,
                                  request.command, request.run_id, request.replicate)
        if start.dropped:
            hooks.say(dropped_line(start.run, start.dropped))
        if start.run is not None:
            hooks.say(f"run {start.run.id} → {start.run.path} ({start.meta['placement']} over {rank.world} devices: "
                      f"{', '.join(start.labels)})")
        try:
            with hooks.progress("sweep", False) as (on_start, advance):
                meta = distributed.measure_on_ranks(rank, store, start, request.interpret, request.rank_timeout,
                                                    on_start=on_start, advance=advance)
        except KeyboardInterrupt:  # also the SIGTERM that stops the ranks when one failed
            if start.run is None:
                raise
            raise SweepInterrupted(start.run.path, rank.world) from None
    return SweepOutcome(start.run, meta)


def dropped_line(run: Run, dropped: str) -> str:
    return f"dropped the last line of {run.rows_path}, cut short: {dropped!r}; measuring that cell again"
