"""A run's life: a new run's folder and metadata (its device, commit, timing, copy baseline and plan), the plan read
back from a stored run, and a stored run taken up again to finish it."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from . import device as devices
from .config import SweepPlan, parse_shape
from .dispatch import table_in_use
from .errors import BenchError
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
        "auto_table": table_in_use(),
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
