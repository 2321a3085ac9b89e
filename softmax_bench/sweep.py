"""The check-then-time loop: for every cell, each variant and peer is first checked against a reference (a wrong
one is reported FAIL and not timed), then timed; each row is stored as soon as it exists."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pandas as pd
import torch

from . import device as devices
from .config import SweepPlan, parse_shape
from .dispatch import auto_choice, backward_for, table_in_use
from .errors import BenchError
from .kernels import (DTYPES, GRAD_TOLERANCES, TOLERANCES, Backward, Fusion, Launch, Traffic, Variant,
                      backward_traffic, backwards, elem_size, one_pass_traffic, variants)
from .ops import backward_reference, get_op, masked_rows, reference, user_call
from .peers import PEERS, THEIRS, Peer, PeerUnavailable
from .results import KEY, Run, new_run, open_run
from .timing import CALL_ROUND_MS, CALL_ROUNDS, Timing, TimingSettings, measure


# A cell of a sweep and what is left to measure in it: (dtype, M, N, (name, pass) of the variants and peers).
TodoCell = tuple[str, int, int, list[tuple[str, str]]]


@dataclass(frozen=True)
class Cell:
    """What a cell's providers run on and are checked against. The forward's references are in `precise` (float64
    on CPU, fp32 on GPU); a backward gets dy and is checked against dx computed from its own y."""

    x: torch.Tensor
    fusion: Fusion
    precise: torch.dtype
    ref: torch.Tensor | None = None  # the forward's, fully masked rows as the Triton variants give them
    ref_nan_rows: torch.Tensor | None = None  # the same with torch's NaN there
    dy: torch.Tensor | None = None  # the gradient of y, for a backward


# A provider's call (output, Launch) and what it must give.
Prepared = tuple[Callable[[], tuple[torch.Tensor, Launch]], torch.Tensor]


@dataclass(frozen=True)
class Provider:
    """Something the sweep measures in one pass: one of our variants (or backwards), `auto`, or a peer."""

    name: str
    kind: str  # "variant", "auto" or "peer"
    traffic: Callable[[int, int, torch.dtype, Fusion], Traffic]
    unsupported: Callable[[int, torch.dtype, Fusion], str | None]
    prepare: Callable[[Cell], Prepared]
    pass_: str = "forward"
    # The call a user makes, which is checked and timed (None: prepare's); prepare's run says what was launched.
    user_call: Callable[[Cell], Callable[[], torch.Tensor]] | None = None


def _softmax_call(name: str) -> Callable[[Cell], Callable[[], torch.Tensor]]:
    """softmax_bench.softmax (log_softmax) of the cell's x with variant=name and its scale, mask and causal."""
    return lambda cell: user_call(cell.x, cell.fusion, name)


def _variant_provider(variant: Variant) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        expected = cell.ref if variant.masked_rows_zero else cell.ref_nan_rows  # eager: NaN, as torch gives them
        return (lambda: variant.launch(cell.x, cell.fusion)), expected

    return Provider(variant.name, "variant", variant.traffic, lambda N, dtype, fusion: variant.unsupported(N, dtype),
                    prepare, user_call=_softmax_call(variant.name))


def _picked(N: int, dtype: torch.dtype, fusion: Fusion) -> Variant:
    return variants()[auto_choice(N, dtype, log=fusion.log)[0]]


def _auto_provider() -> Provider:
    def prepare(cell: Cell) -> Prepared:
        chosen = _picked(cell.x.shape[1], cell.x.dtype, cell.fusion)

        def call():
            y, launch = chosen.launch(cell.x, cell.fusion)
            return y, Launch({"picked": chosen.name, **launch.config}, launch.compiled)

        return call, cell.ref

    return Provider(
        "auto", "auto",
        lambda M, N, dtype, fusion: _picked(N, dtype, fusion).traffic(M, N, dtype, fusion),
        lambda N, dtype, fusion: _picked(N, dtype, fusion).unsupported(N, dtype),
        prepare,
        user_call=_softmax_call("auto"),
    )


def _peer_unsupported(peer: Peer) -> Callable[[int, torch.dtype, Fusion], str | None]:
    return lambda N, dtype, fusion: (
        None if fusion.plain or peer.fuses else f"{peer.name} computes a plain softmax: no scale, mask or log to fuse")


def _peer_provider(peer: Peer) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        fn = peer.make(cell.fusion)
        return (lambda: (fn(cell.x), Launch())), cell.ref if peer.masked_rows_zero else cell.ref_nan_rows

    return Provider(peer.name, "peer", one_pass_traffic, _peer_unsupported(peer), prepare)


def _our_y(cell: Cell) -> torch.Tensor:
    """The forward output a backward of ours gets: auto's."""
    return _picked(cell.x.shape[1], cell.x.dtype, cell.fusion).launch(cell.x, cell.fusion)[0]


def _backward_provider(backward: Backward) -> Provider:
    def prepare(cell: Cell) -> Prepared:
        y = _our_y(cell)
        return (lambda: backward.launch(y, cell.dy, cell.fusion)), backward_reference(y, cell.dy, cell.fusion,
                                                                                      cell.precise)

    return Provider(backward.name, "variant", backward.traffic, lambda N, dtype, fusion: backward.unsupported(N, dtype),
                    prepare, "backward")


def _no_backward_provider(variant: Variant) -> Provider:
    runs = "fused's, cluster's or two_pass's" if variant.triton else "eager's"
    reason = f"{variant.name} has no backward of its own: softmax_bench's autograd runs {runs}"
    return Provider(variant.name, "variant", backward_traffic, lambda N, dtype, fusion: reason, None, "backward")


def _auto_backward_provider() -> Provider:
    def picked(N: int, dtype: torch.dtype, fusion: Fusion) -> Backward:
        return backward_for(_picked(N, dtype, fusion), N, dtype)

    def prepare(cell: Cell) -> Prepared:
        y = _our_y(cell)
        chosen = picked(cell.x.shape[1], cell.x.dtype, cell.fusion)

        def call():
            dx, launch = chosen.launch(y, cell.dy, cell.fusion)
            return dx, Launch({"picked": chosen.name, **launch.config}, launch.compiled)

        return call, backward_reference(y, cell.dy, cell.fusion, cell.precise)

    def autograd_call(cell: Cell) -> Callable[[], torch.Tensor]:
        """The backward as a model runs it: autograd through softmax_bench's op."""
        x = cell.x.detach().requires_grad_()
        y = user_call(x, cell.fusion, "auto")()
        return lambda: torch.autograd.grad(y, x, cell.dy, retain_graph=True)[0]

    return Provider(
        "auto", "auto",
        lambda M, N, dtype, fusion: picked(N, dtype, fusion).traffic(M, N, dtype, fusion),
        lambda N, dtype, fusion: picked(N, dtype, fusion).unsupported(N, dtype),
        prepare, "backward", autograd_call,
    )


def _backward_peer_provider(peer: Peer) -> Provider:
    """The peer's forward run once with autograd; its backward timed (torch.autograd.grad, the graph kept)."""

    def prepare(cell: Cell) -> Prepared:
        fn = peer.make(cell.fusion)
        x = cell.x.detach().requires_grad_()
        y = fn(x)

        def call():
            return torch.autograd.grad(y, x, cell.dy, retain_graph=True)[0], Launch()

        return call, backward_reference(y.detach(), cell.dy, cell.fusion, cell.precise)

    return Provider(peer.name, "peer", backward_traffic, _peer_unsupported(peer), prepare, "backward")


def providers(names: list[str], passes: list[str] = ["forward"]) -> list[Provider]:
    """For each pass: our variants (backward: our backwards), auto, then the peers; only `names` when given
    (unknown names are an error)."""
    every = []
    if "forward" in passes:
        every += [_variant_provider(v) for v in variants().values()] + [_auto_provider()]
        every += [_peer_provider(p) for p in PEERS.values()]
    if "backward" in passes:
        ours = backwards()
        every += [_backward_provider(ours[v.name]) if v.name in ours else _no_backward_provider(v)
                  for v in variants().values()]
        every += [_auto_backward_provider()] + [_backward_peer_provider(p) for p in PEERS.values()]
    if not names:
        return every
    known = {p.name for p in every}
    for name in names:
        if name not in known:
            raise BenchError(f"unknown variant {name!r}; choose from {', '.join(known)}")
    return [p for p in every if p.name in names]


def check(y: torch.Tensor, ref: torch.Tensor, dtype: torch.dtype,
          tolerances: dict[torch.dtype, tuple[float, float]] = TOLERANCES) -> tuple[float, str | None]:
    """max |y - ref| (NaN where both are NaN, and equal infinities, count as equal), and why y is wrong (None when
    it is within the dtype's tolerance everywhere)."""
    if y.shape != ref.shape or y.dtype != dtype:
        return float("nan"), f"wrong output: {tuple(y.shape)} {y.dtype}, expected {tuple(ref.shape)} {dtype}"
    y = y.to(ref.dtype)
    diff = (y - ref).abs()
    atol, rtol = tolerances[dtype]
    bad = ~((diff <= atol + rtol * ref.abs()) | (y == ref) | (y.isnan() & ref.isnan()))  # any other NaN is bad
    max_err = float(diff.nan_to_num(nan=0.0).max()) if diff.numel() else 0.0
    if bool(bad.any()):
        not_finite = ~y.isfinite() & ref.isfinite()  # NaN or inf where the reference is finite
        if bool(not_finite.any()):
            off = bad & ~not_finite
            worst = float(diff[off].max()) if bool(off.any()) else 0.0
            return max_err, (f"{int(not_finite.sum())} elements are NaN or inf where the reference is finite"
                             + (f"; {int(off.sum())} more off by up to {worst:.3g}" if bool(off.any()) else ""))
        return max_err, f"{int(bad.sum())} elements off by up to {max_err:.3g} (atol {atol}, rtol {rtol})"
    return max_err, None


def cell_input(M: int, N: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """The random input of a cell: logits of standard deviation 3 (never time on zeros)."""
    return torch.randn(M, N, device=device, dtype=torch.float32).mul_(3.0).to(dtype)


def memory_needed(M: int, N: int, dtype: torch.dtype, passes: list[str] = ["forward"]) -> int:
    """Input, output, a mask, the fp32 reference and the check's temporaries, with room for unfused's fp32
    intermediates; for the backward, y, dy, dx and the reference's temporaries too."""
    forward = 2 * elem_size(dtype) + 1 + 4 * 5
    backward = 3 * elem_size(dtype) + 4 * 3 if "backward" in passes else 0
    return M * N * (forward + backward)


def moved_bytes(M: int, N: int, dtype: torch.dtype, pass_: str) -> int:
    """What every variant's GB/s counts, the same for all: read x and write y (2 row passes); backward: read y and
    dy, write dx (3)."""
    return (3 if pass_ == "backward" else 2) * M * N * elem_size(dtype)


COPY_TRIALS = 3
# A cell moving fewer bytes than this, and its copy, are timed in TRIALS trials from fresh memory, the trial with the
# fastest median kept: on the H200 one process measured fp32 4096×4000 (131 MB) 3 % slower than two others and its
# copy 3 % faster, while cells of 512 MB agreed within 2 %; with three trials, 2.8 % (docs/perf-notes.md).
TRIALS_BELOW_BYTES = 256 * 2**20
TRIALS = 5


def copy_timing(nbytes: int, dtype: torch.dtype, device: str, settings: TimingSettings, interpret: bool) -> Timing:
    """The copy a cell is compared with: one that reads and writes `nbytes` in all (the cell's own bytes), timed as
    the cell's calls are, in COPY_TRIALS trials (a small cell's: TRIALS) with fresh buffers each; the trial with the
    fastest median is the ceiling. One trial's median moved by ±1 % between two runs on the H200
    (docs/perf-notes.md), and every cell of its size with it."""
    trials = []
    for _ in range(TRIALS if nbytes < TRIALS_BELOW_BYTES else COPY_TRIALS):
        source = torch.empty(nbytes // 2 // elem_size(dtype), dtype=dtype, device=device).normal_()
        out = torch.empty_like(source)
        trials.append(measure(lambda: out.copy_(source), settings, interpret))
        del source, out
    return min(trials, key=lambda t: t.ms)


def timed(call: Callable[[], object], cell: Cell, pass_: str, nbytes: int, settings: TimingSettings,
          interpret: bool) -> Timing:
    """`call` timed as the cell's copy is: for a cell of fewer than TRIALS_BELOW_BYTES, in TRIALS trials with the
    input the call reads (x; the backward's dy) moved to fresh memory before each next one, the fastest median
    kept. The tensor is moved in place (Tensor.set_), so every call bound to it reads the new memory; the memory
    it left stays held until the last trial, so that no trial gets an earlier one's back from the allocator."""
    trials = TRIALS if nbytes < TRIALS_BELOW_BYTES and not interpret else 1
    timings, left = [], []
    for trial in range(trials):
        if trial:
            moved = cell.dy if pass_ == "backward" else cell.x  # never x in a backward: its graph may have saved x
            left.append(moved.untyped_storage())
            moved.set_(moved.clone())
        timings.append(measure(call, settings, interpret))
    return min(timings, key=lambda t: t.ms)


def error_line(err: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0] if text else ''}"[:300]


def measure_cell(
    dtype_name: str,
    M: int,
    N: int,
    todo: list[Provider],
    write_row: Callable[[dict], None],
    copy_gbps: float,
    plan: SweepPlan,
    interpret: bool,
    advance: Callable[[str], None],
    copies: dict,
) -> None:
    """Check, then time, each provider on one cell; `copies` keeps the run's copies of the same bytes, per (dtype,
    bytes): each cell is compared with a copy of its own bytes, timed the same way."""
    dtype = DTYPES[dtype_name]
    base = {"dtype": dtype_name, "M": M, "N": N, "op": plan.op}
    op = get_op(plan.op)
    passes = list(dict.fromkeys(p.pass_ for p in todo))

    def store(provider: Provider, timing: Timing | None = None, **fields) -> None:
        # `fusion` is the cell's, assigned below before the first store
        model_bytes = provider.traffic(M, N, dtype, fusion).total_bytes
        row = {**base, "variant": provider.name, "pass": provider.pass_, "model_bytes": model_bytes, **fields}
        cell_copy_gbps = copy_gbps
        if timing is not None:
            nbytes = moved_bytes(M, N, dtype, provider.pass_)
            copy = copies[(dtype_name, nbytes)]
            cell_copy_gbps = nbytes / copy.ms / 1e6
            row.update(ms=timing.ms, ms_p20=timing.ms_p20, ms_p80=timing.ms_p80, call_ms=timing.call_ms,
                       call_p20=timing.call_p20, call_p80=timing.call_p80, host_us=timing.host_us,
                       copy_ms=copy.ms, copy_p20=copy.ms_p20, copy_p80=copy.ms_p80,
                       gbps=nbytes / timing.ms / 1e6, model_gbps=model_bytes / timing.ms / 1e6)
            row["pct_of_copy"] = 100 * copy.ms / timing.ms
            row["pct_of_device_copy"] = 100 * row["gbps"] / copy_gbps
        row["expected_ms"] = model_bytes / cell_copy_gbps / 1e6
        if timing is not None:  # how near the variant is to a copy's speed for the bytes it must move (issue 26)
            row["pct_of_roofline"] = 100 * row["expected_ms"] / timing.ms
        write_row(row)
        advance(f"{dtype_name} {M}×{N} {provider.name}{' backward' if provider.pass_ == 'backward' else ''}")

    device = "cpu" if interpret else "cuda"
    if not interpret:
        torch.cuda.empty_cache()
        free, _ = torch.cuda.mem_get_info()
        if memory_needed(M, N, dtype, passes) > free:
            reason = f"needs ~{memory_needed(M, N, dtype, passes) / 1e9:.1f} GB of GPU memory, {free / 1e9:.1f} GB free"
            fusion = op.fusion(torch.empty(M, N, device="meta"))  # shapes only, for the traffic model
            for provider in todo:
                store(provider, status="skipped", reason=reason)
            return

    x = cell_input(M, N, dtype, device)
    for pass_ in passes:
        nbytes = moved_bytes(M, N, dtype, pass_)
        if (dtype_name, nbytes) not in copies:
            copies[(dtype_name, nbytes)] = copy_timing(nbytes, dtype, device, plan.timing, interpret)
    fusion = op.fusion(x)
    cell = Cell(x, fusion, torch.float64 if interpret else torch.float32)
    if "forward" in passes:
        ref = reference(x, fusion, cell.precise)
        rows = masked_rows(ref, fusion)  # fully masked: zeros (log: -inf), or NaN for torch's semantics
        cell = replace(cell, ref=ref, ref_nan_rows=ref.masked_fill(rows, float("nan")) if bool(rows.any()) else ref)
        del ref, rows
    if "backward" in passes:
        cell = replace(cell, dy=torch.randn(M, N, device=device, dtype=torch.float32).to(dtype))
    for provider in todo:
        reason = provider.unsupported(N, dtype, fusion)
        if reason is not None:
            store(provider, status="skipped", reason=reason)
            continue
        if provider.kind == "peer" and interpret:
            store(provider, status="skipped", reason="a GPU peer: not run under --interpret")
            continue
        try:
            run_launch, expected = provider.prepare(cell)
            y, launch = run_launch()
            if provider.user_call is not None:
                call = provider.user_call(cell)
                y = call()
            else:
                call = lambda: run_launch()[0]  # noqa: E731
        except PeerUnavailable as err:
            store(provider, status="skipped", reason=str(err))
            continue
        except Exception as err:  # a crash is a result: recorded, and the sweep goes on
            store(provider, status="skipped" if provider.kind == "peer" else "FAIL", reason=error_line(err))
            continue
        tolerances = GRAD_TOLERANCES if provider.pass_ == "backward" else TOLERANCES
        max_err, wrong = check(y, expected, dtype, tolerances)
        del y, expected
        extra = {"max_err": max_err, "n_regs": launch.n_regs, "n_spills": launch.n_spills,
                 "config": " ".join(f"{k}={v}" for k, v in launch.config.items()) or None}
        if wrong is not None:
            if provider.name in THEIRS:  # torch's own bf16 log_softmax on the CPU, say: not softmax_bench's kernels
                owner = "torch's" if provider.name in ("eager", "torch_compile") else f"{provider.name}'s"
                wrong = f"{owner} own result, not softmax_bench's: {wrong}"
            store(provider, status="FAIL", reason=wrong, **extra)
            continue
        nbytes = moved_bytes(M, N, dtype, provider.pass_)
        store(provider, timed(call, cell, provider.pass_, nbytes, plan.timing, interpret), status="ok", **extra)
        del call, run_launch
    del x, cell, fusion


def todo_cells(plan: SweepPlan, rows: pd.DataFrame) -> list[TodoCell]:
    """The plan's cells in sweep order, each with the (variant or peer, pass) not yet in `rows`; finished cells left
    out."""
    names = [(p.name, p.pass_) for p in providers(plan.variants, plan.passes)]
    done = {tuple(r) for r in rows[KEY].astype(str).itertuples(index=False)}
    cells = []
    for dtype_name, M, N in plan.cells():
        todo = [(name, pass_) for name, pass_ in names if (name, pass_, dtype_name, str(M), str(N)) not in done]
        if todo:
            cells.append((dtype_name, M, N, todo))
    return cells


def dry_run(plan: SweepPlan, interpret: bool) -> tuple[list[dict], float | None]:
    """What a sweep of the plan would measure, cell by cell — its variants and peers, the GPU memory it needs —
    and about how long it would take on a GPU (None under the interpreter, whose speed is the CPU's): each variant
    and each copy timed for warm-up + repetitions + the call rounds, in TRIALS trials for a small cell."""
    names = [p.name for p in providers(plan.variants, plan.passes)]
    cells, seconds = [], 0.0
    per_measure = (plan.timing.warmup_ms + plan.timing.rep_ms + CALL_ROUNDS * CALL_ROUND_MS) / 1000
    for dtype_name, M, N in plan.cells():
        dtype = DTYPES[dtype_name]
        trials = TRIALS if moved_bytes(M, N, dtype, "forward") < TRIALS_BELOW_BYTES else 1
        copy_trials = TRIALS if trials > 1 else COPY_TRIALS
        seconds += per_measure * (trials * len(names) + copy_trials * len(plan.passes))
        cells.append({"dtype": dtype_name, "M": M, "N": N, "measures": len(names),
                      "memory_gb": memory_needed(M, N, dtype, plan.passes) / 1e9})
    return cells, None if interpret else seconds


def row_count(cells: list[TodoCell]) -> int:
    return sum(len(names) for *_, names in cells)


def measure_cells(
    cells: list[TodoCell],
    plan: SweepPlan,
    write_row: Callable[[dict], None],
    copy_gbps: dict[str, float],
    interpret: bool,
    advance: Callable[[str], None],
) -> None:
    by_name = {(p.name, p.pass_): p for p in providers(plan.variants, plan.passes)}
    copies: dict = {}  # the copies of each cell's bytes, per (dtype, bytes), for the whole of these cells
    for dtype_name, M, N, names in cells:
        todo = [by_name[name] for name in names]
        measure_cell(dtype_name, M, N, todo, write_row, copy_gbps[dtype_name], plan, interpret, advance, copies)


def failed_rows(cells: list[TodoCell], written: set[tuple], reason: str, op: str) -> list[dict]:
    """FAIL rows, with the reason, for every (variant, pass, dtype, M, N) of the cells not in `written`."""
    return [{"variant": name, "pass": pass_, "dtype": dtype_name, "M": M, "N": N, "op": op, "status": "FAIL",
             "reason": reason}
            for dtype_name, M, N, names in cells for name, pass_ in names
            if (name, pass_, dtype_name, M, N) not in written]


def run_sweep(
    plan: SweepPlan,
    run: Run,
    meta: dict,
    interpret: bool,
    on_start: Callable[[int], None] = lambda total: None,
    advance: Callable[[str], None] = lambda what: None,
) -> dict:
    """Measure every (cell, provider) of the plan not yet in the run; returns the final metadata."""
    cells = todo_cells(plan, run.rows())
    on_start(row_count(cells))
    meta = {**meta, "status": "running", "clocks_before": devices.clocks(interpret)}
    run.write_meta(meta)
    label = devices.device_label(interpret)
    try:
        measure_cells(cells, plan, lambda row: run.append({**row, "device": label}), meta["copy_gbps"], interpret,
                      advance)
    except BaseException:
        meta.update(status="interrupted", finished_at=_now())
        run.write_meta(meta)
        raise
    meta.update(status="complete", finished_at=_now(), clocks_after=devices.clocks(interpret))
    run.write_meta(meta)
    return meta


def _now() -> str:
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
            "op": plan.op, "passes": plan.passes, "sources": plan.sources}


def plan_from_meta(meta: dict) -> SweepPlan:
    stored = meta["plan"]
    return SweepPlan(
        shapes=[parse_shape(s) for s in stored["shapes"]],
        dtypes=stored["dtypes"],
        variants=stored["variants"],
        timing=TimingSettings(meta["timing"]["warmup_ms"], meta["timing"]["rep_ms"], meta["timing"].get("l2", "clean")),
        op=stored.get("op", "softmax"),
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
        "started_at": _now(),
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
        providers(plan.variants, plan.passes)
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
