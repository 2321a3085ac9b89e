"""What the configuration experiments (scripts/cluster-configs.py, fused-configs.py, backward-tiles.py, eviction.py)
share: time one configuration of a kernel, then check its output against an fp32 reference, as % of a copy of the
same bytes measured in the same process; or time several in rounds."""

import itertools
import statistics
from dataclasses import dataclass

import torch

from softmax_bench.baseline import measure_copy
from softmax_bench.timing import Timing, TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=30)
ELEMS = 2**27


def copy_gbps(dtype: torch.dtype, nbytes: int) -> float:
    """A copy's bandwidth over the bytes a kernel moves (half read, half written)."""
    return measure_copy(dtype, nbytes // 2 // dtype.itemsize, SETTINGS, interpret=False)["gbps"]


@dataclass
class Timed:
    timing: Timing
    launch: object  # the kernel's Launch: registers and spills
    max_err: float
    ok: bool
    pct_of_copy: float


def time_checked(run, config, ref: torch.Tensor, tolerances: dict, dtype: torch.dtype, nbytes: int,
                 copy: float, label) -> Timed | None:
    """run(config) timed, then run once more and checked against ref within tolerances[dtype] (atol, rtol of ref's
    largest magnitude); None, said with `label`, when the configuration does not build: a row, not the end."""
    try:
        t = measure(lambda: run(config), SETTINGS, interpret=False)
        out, launch = run(config)
        err = (out.float() - ref).abs().max().item()
    except Exception as e:  # noqa: BLE001
        print(*label, "error", type(e).__name__, str(e)[:200], flush=True)
        return None
    ok = err == err and err <= tolerances[dtype][0] + tolerances[dtype][1] * ref.abs().max().item()
    return Timed(t, launch, err, ok, 100 * nbytes / t.ms / 1e6 / copy)


def cycling(calls: list):
    """One call, each time the next of `calls` (copies of the inputs: what a call leaves in L2 cannot serve the
    next one)."""
    turn = itertools.cycle(calls)
    return lambda: next(turn)()


def in_rounds(calls: dict, rounds: int, dtype: torch.dtype, nbytes: int, write_row, prefix: list,
              marked: str = "") -> dict[str, list[float]]:
    """Each of `calls` (label: call) timed once a round, in turn, for `rounds` rounds after a copy of the same
    bytes, so that a drift of the GPU (clocks, heat) falls on all alike; a CSV row each (prefix + label, round, ms,
    % of copy) through write_row; the figures printed best median first, `marked` flagged. Returns the % of
    copy of each label, a round each."""
    figures = {label: [] for label in calls}
    for round_ in range(rounds):
        copy = copy_gbps(dtype, nbytes)
        for label, call in calls.items():
            ms = measure(call, SETTINGS, interpret=False).ms
            pct = 100 * nbytes / ms / 1e6 / copy
            figures[label].append(pct)
            write_row([*prefix, label, round_, ms, round(pct, 2), round(copy)])
    for label in sorted(figures, key=lambda k: -statistics.median(figures[k])):
        f = sorted(figures[label])
        print(*prefix, f"{label:>24}", f"median {statistics.median(f):6.2f}", f"min {f[0]:6.2f}", f"max {f[-1]:6.2f}",
              "(default)" if label == marked else "", flush=True)
    return figures
