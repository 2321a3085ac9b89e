"""The check-then-time loop: for every cell, each variant and peer is first checked against a reference (a wrong
one is reported FAIL and not timed), then timed; each row is stored as soon as it exists. What is measured and how
it is checked is softmax_bench.providers'; a run's start, resumption and metadata, softmax_bench.run_life."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import pandas as pd
import torch

from . import device as devices
from .baseline import copy_buffers
from .config import SweepPlan
from .kernels import DTYPES, GRAD_TOLERANCES, TOLERANCES, Fusion, elem_size, floor_traffic
from .ops import FUSED_OPS, get_op, masked_rows, pass_bytes, reference
from .peers import THEIRS, PeerUnavailable
from .providers import Cell, Provider, cell_input, check, providers
from .results import KEY, Run
from .run_life import now_stamp
from .timing import CALL_ROUND_MS, CALL_ROUNDS, Timing, TimingSettings, measure


# A cell of a sweep and what is left to measure in it: (dtype, M, N, (name, pass) of the variants and peers).
TodoCell = tuple[str, int, int, list[tuple[str, str]]]


def memory_needed(M: int, N: int, dtype: torch.dtype, passes: list[str] = ["forward"], op: str = "softmax") -> int:
    """Input, output, a mask, the fp32 reference and the check's temporaries, with room for unfused's fp32
    intermediates (a bias of x's shape, and the reference's copy of it, beside them); for the backward, y, dy, dx
    and the reference's temporaries too. Cross-entropy: the logits, a peer's copy of them and its fp32 upcast, and
    the reference's logits and gradient."""
    if op == "cross-entropy":
        return M * N * (2 * elem_size(dtype) + 4 + (elem_size(dtype) + 2 * 4 + 4 * 2 if "backward" in passes else 0))
    forward = 2 * elem_size(dtype) + 1 + 4 * 5 + (elem_size(dtype) + 4 if op == "biased" else 0)
    backward = 3 * elem_size(dtype) + 4 * 3 if "backward" in passes else 0
    return M * N * (forward + backward)


def moved_bytes(M: int, N: int, dtype: torch.dtype, pass_: str, op: str = "softmax") -> int:
    """What every variant's GB/s counts, the same for all: read x and write y (2 row passes); backward: read y and
    dy, write dx (3). Cross-entropy: its forward reads the logits (1), its step reads them and writes their
    gradient, one copy (2)."""
    return pass_bytes(op, pass_)[0] * M * N * elem_size(dtype)


def roofline_bytes(M: int, N: int, dtype: torch.dtype, pass_: str, fusion: Fusion) -> int:
    """The least a pass of a fused op must move (x's kept columns and its mask or bias read, y written; the
    backward's floor): the bytes its roofline copy moves, so that a fused cell is priced at what a copy of its own
    bytes reaches, not at a copy of x and y's bandwidth prorated. A copy's bandwidth falls with its size below
    some 64 MiB (causal bf16 4096×4000's 48.8 MB at 2904–2999 GB/s on the H100, its x-and-y copy of 65.5 MB at
    3112: docs/perf-notes.md, fifty-seventh session)."""
    return floor_traffic(M, N, dtype, fusion, pass_).total_bytes


def copied_bytes(M: int, N: int, dtype: torch.dtype, passes: list[str], op: str, fusion: Fusion) -> set[int]:
    """The bytes of each copy a cell is compared with: x and y's (every GB/s's bytes) for each pass, and a fused
    op's floor (its roofline)."""
    copied = {moved_bytes(M, N, dtype, pass_, op) for pass_ in passes}
    if op in FUSED_OPS:
        copied |= {roofline_bytes(M, N, dtype, pass_, fusion) for pass_ in passes}
    return copied


COPY_TRIALS = 3
# A cell moving fewer bytes than this, and its copy, are timed in TRIALS trials from fresh memory, the trial with the
# fastest median kept: on the H200 one process measured fp32 4096×4000 (131 MB) 3 % slower than two others and its
# copy 3 % faster, while cells of 512 MB agreed within 2 %; with three trials, 2.8 % (docs/perf-notes.md).
TRIALS_BELOW_BYTES = 256 * 2**20
TRIALS = 5


def copy_timing(nbytes: int, dtype: torch.dtype, device: str, settings: TimingSettings, interpret: bool) -> Timing:
    """The copy a cell is compared with: one that reads and writes `nbytes` in all (the cell's own bytes), timed as
    the cell's calls are, in COPY_TRIALS trials (a small cell's: TRIALS) with fresh buffers each (whole pages:
    baseline.copy_buffers); the trial with the fastest median is the ceiling. One trial's median moved by ±1 %
    between two runs on the H200 (docs/perf-notes.md), and every cell of its size with it."""
    trials = []
    for _ in range(TRIALS if nbytes < TRIALS_BELOW_BYTES else COPY_TRIALS):
        source, out = copy_buffers(nbytes // 2 // elem_size(dtype), dtype, device)  # whole pages: a memcpy's pace
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
            # never x in a backward: its graph may have saved x (a loss's step, which has no dy, builds its own)
            moved = cell.dy if pass_ == "backward" and cell.dy is not None else cell.x
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
    bytes): each cell is compared with a copy of its own bytes, timed the same way, and a fused op's cell is
    priced at a copy of its floor's bytes (roofline_bytes)."""
    dtype = DTYPES[dtype_name]
    op = get_op(plan.op)
    base = {"dtype": dtype_name, "M": M, "N": N, "op": plan.op, "mask_shape": op.mask_shape_at(plan.mask_shape, M)}
    passes = list(dict.fromkeys(p.pass_ for p in todo))
    fused = plan.op in FUSED_OPS

    def store(provider: Provider, timing: Timing | None = None, **fields) -> None:
        # `fusion` is the cell's, assigned below before the first store
        model_bytes = provider.traffic(M, N, dtype, fusion).total_bytes
        row = {**base, "variant": provider.name, "pass": provider.pass_, "model_bytes": model_bytes, **fields}
        cell_copy_gbps = copy_gbps
        if timing is not None:
            nbytes = moved_bytes(M, N, dtype, provider.pass_, plan.op)
            copy = copies[(dtype_name, nbytes)]
            cell_copy_gbps = nbytes / copy.ms / 1e6
            if fused:
                floor = roofline_bytes(M, N, dtype, provider.pass_, fusion)
                row["roofline_copy_ms"] = copies[(dtype_name, floor)].ms
                cell_copy_gbps = floor / row["roofline_copy_ms"] / 1e6
            row.update(ms=timing.ms, ms_p20=timing.ms_p20, ms_p80=timing.ms_p80, call_ms=timing.call_ms,
                       call_p20=timing.call_p20, call_p80=timing.call_p80, host_us=timing.host_us,
                       copy_host_us=copy.host_us, samples=timing.samples, noise_pct=timing.noise_pct, copy_ms=copy.ms, copy_p20=copy.ms_p20,
                       copy_p80=copy.ms_p80, gbps=nbytes / timing.ms / 1e6, model_gbps=model_bytes / timing.ms / 1e6,
                       **(timing.clocks or {}))
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
        needed = memory_needed(M, N, dtype, passes, plan.op)
        if needed > free:
            reason = f"needs ~{needed / 1e9:.1f} GB of GPU memory, {free / 1e9:.1f} GB free"
            # shapes only, for the traffic model
            fusion = op.shapes_fusion(M, N, dtype, plan.mask_shape, plan.log)
            for provider in todo:
                store(provider, status="skipped", reason=reason)
            return

    x = cell_input(M, N, dtype, device)
    fusion = op.fusion_for(x, plan.mask_shape, plan.log)
    for nbytes in sorted(copied_bytes(M, N, dtype, passes, plan.op, fusion)):
        if (dtype_name, nbytes) not in copies:
            copies[(dtype_name, nbytes)] = copy_timing(nbytes, dtype, device, plan.timing, interpret)
    cell = Cell(x, fusion, torch.float64 if interpret else torch.float32)
    if plan.op == "cross-entropy":
        from .cross_entropy_providers import loss_cell

        cell = loss_cell(cell, passes)
    elif "forward" in passes:
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
        if provider.check_as is not None:
            out_dtype, tolerances = provider.check_as(cell)
            out_dtype = out_dtype or y.dtype
        else:
            out_dtype, tolerances = dtype, GRAD_TOLERANCES if provider.pass_ == "backward" else TOLERANCES
        max_err, wrong = check(y, expected, out_dtype, tolerances)
        del y, expected
        extra = {"max_err": max_err, "n_regs": launch.n_regs, "n_spills": launch.n_spills,
                 "config": " ".join(f"{k}={v}" for k, v in launch.config.items()) or None}
        if wrong is not None:
            if provider.name in THEIRS:  # torch's own bf16 log_softmax on the CPU, say: not softmax_bench's kernels
                owner = "torch's" if provider.name in ("eager", "torch_compile") else f"{provider.name}'s"
                wrong = f"{owner} own result, not softmax_bench's: {wrong}"
            store(provider, status="FAIL", reason=wrong, **extra)
            continue
        nbytes = moved_bytes(M, N, dtype, provider.pass_, plan.op)
        store(provider, timed(call, cell, provider.pass_, nbytes, plan.timing, interpret), status="ok", **extra)
        del call, run_launch
    del x, cell, fusion


def todo_cells(plan: SweepPlan, rows: pd.DataFrame) -> list[TodoCell]:
    """The plan's cells in sweep order, each with the (variant or peer, pass) not yet in `rows`; finished cells left
    out."""
    names = [(p.name, p.pass_) for p in providers(plan.variants, plan.passes, plan.op)]
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
    and each copy (copied_bytes) timed for warm-up + repetitions + the call rounds, in TRIALS trials for a small
    cell."""
    names = [p.name for p in providers(plan.variants, plan.passes, plan.op)]
    op = get_op(plan.op)
    cells, seconds = [], 0.0
    per_measure = (plan.timing.warmup_ms + plan.timing.rep_ms + CALL_ROUNDS * CALL_ROUND_MS) / 1000
    for dtype_name, M, N in plan.cells():
        dtype = DTYPES[dtype_name]
        trials = TRIALS if moved_bytes(M, N, dtype, "forward", plan.op) < TRIALS_BELOW_BYTES else 1
        copy_trials = TRIALS if trials > 1 else COPY_TRIALS
        copies = len(copied_bytes(M, N, dtype, plan.passes, plan.op, op.shapes_fusion(M, N, dtype, plan.mask_shape,
                                                                                       plan.log)))
        seconds += per_measure * (trials * len(names) + copy_trials * copies)
        cells.append({"dtype": dtype_name, "M": M, "N": N, "measures": len(names),
                      "memory_gb": memory_needed(M, N, dtype, plan.passes, plan.op) / 1e9,
                      "mask_shape": op.mask_shape_at(plan.mask_shape, M)})
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
    by_name = {(p.name, p.pass_): p for p in providers(plan.variants, plan.passes, plan.op)}
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
        meta.update(status="interrupted", finished_at=now_stamp())
        run.write_meta(meta)
        raise
    meta.update(status="complete", finished_at=now_stamp(), clocks_after=devices.clocks(interpret))
    run.write_meta(meta)
    return meta
