"""What the configuration experiments (scripts/cluster-configs.py, fused-configs.py, backward-tiles.py, eviction.py)
share: time one configuration of a kernel, then check its output against an fp32 reference, as % of a copy of the
same bytes measured in the same process; or time several in rounds."""

import csv
import itertools
import statistics
from dataclasses import dataclass

import torch

from softmax_bench.baseline import measure_copy
from softmax_bench.kernels import GRAD_TOLERANCES, PLAIN, TOLERANCES
from softmax_bench.ops import backward_reference
from softmax_bench.timing import Timing, TimingSettings, measure

SETTINGS = TimingSettings(warmup_ms=10, rep_ms=30)
ELEMS = 2**27
VOCAB = {50257: 8192, 128256: 4096, 151936: 2048}  # rows of the vocabulary shapes; other widths: ELEMS // N
# the sweep's fused ops (softmax_bench.ops) timed here
FUSED_OPS = ("scaled", "scaled-masked", "causal", "biased", "key-padded")


def csv_rows(path: str, header: list[str]):
    """A function writing one row to a new CSV file at `path`, flushed: an interrupted run keeps its rows."""
    out = open(path, "w", newline="")
    writer = csv.writer(out)
    writer.writerow(header)
    out.flush()
    return lambda row: (writer.writerow(row), out.flush())


def input_copies(N: int, dtype: torch.dtype, copies: int) -> tuple[int, list[torch.Tensor]]:
    """(M, `copies` random M×N inputs on the GPU): the grid's rows for N."""
    M = VOCAB.get(N, ELEMS // N)
    return M, [torch.randn(M, N, dtype=dtype, device="cuda") * 3 for _ in range(copies)]


def cell_input(cell: str, dtype: torch.dtype) -> tuple[int, int, torch.Tensor]:
    """(M, N, a random M×N input on the GPU) of a cell named "MxN", or "N" for the grid's rows of that width."""
    if "x" in cell:
        M, N = map(int, cell.split("x"))
        return M, N, torch.randn(M, N, dtype=dtype, device="cuda") * 3
    M, [x] = input_copies(int(cell), dtype, 1)
    return M, int(cell), x


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
        out = out.float()
        # a log_softmax's masked-out -inf equal to the reference's is no error (-inf − -inf would be NaN)
        err = torch.where(out == ref, 0.0, (out - ref).abs()).max().item()
        largest = ref.abs().masked_fill(ref.isinf(), 0).max().item()
    except Exception as e:  # noqa: BLE001
        print(*label, "error", type(e).__name__, str(e)[:200], flush=True)
        return None
    ok = err == err and err <= tolerances[dtype][0] + tolerances[dtype][1] * largest
    return Timed(t, launch, err, ok, 100 * nbytes / t.ms / 1e6 / copy)


def pass_inputs(xs: list[torch.Tensor], pass_: str):
    """(the inputs of `pass_` made from each copy x of the input: x for the forward, (y, dy) for the backward; the
    fp32 reference for the first; its tolerances; the bytes a call moves)."""
    if pass_ == "forward":
        return xs, torch.softmax(xs[0].float(), -1), TOLERANCES, 2 * xs[0].nbytes
    inputs = [(torch.softmax(x, -1), torch.randn_like(x)) for x in xs]
    return inputs, backward_reference(*inputs[0], PLAIN, torch.float32), GRAD_TOLERANCES, 3 * xs[0].nbytes


def cycling(calls: list):
    """One call, each time the next of `calls` (copies of the inputs: what a call leaves in L2 cannot serve the
    next one)."""
    turn = itertools.cycle(calls)
    return lambda: next(turn)()


def checked_forms(launched, forms, expected: torch.Tensor, prefix: list) -> dict:
    """Each of `forms` launched once (launched(form) gives its output and its Launch) and checked: its largest error
    against `expected`, and whether its output is the first form's bit for bit, printed after `prefix` with its
    registers. Returns each form's call, for in_rounds."""
    reference = None
    for form in forms:
        out, launch = launched(form)
        reference = out if reference is None else reference
        err = (out.double() - expected).abs().max().item()
        same = "bit for bit" if torch.equal(out, reference) else "DIFFERS"
        print(*prefix, form, same, f"max err {err:.3g}", "registers", launch.n_regs, "spilled", launch.n_spills,
              flush=True)
    return {form: (lambda form=form: launched(form)) for form in forms}


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


def occupancy_cap(registers: int | None, warps: int) -> int | None:
    """The most registers a thread may take for an SM to hold one more CTA of `warps` warps than at `registers`
    (64 K registers an SM, 64 warps, allocated 8 at a time a thread), or None where that is below 32 or no CTA more
    fits. Causal bf16 8192×50257 went 89.6 → 96.1 % of a copy capped so (114 → 96 registers, 4 → 5 CTAs;
    twenty-seventh session)."""
    if not registers:
        return None
    ctas = min(65536 // ((registers + 7) // 8 * 8 * 32 * warps), 64 // warps)
    cap = 65536 // ((ctas + 1) * 32 * warps) // 8 * 8
    return cap if 32 <= cap < registers and (ctas + 1) * warps <= 64 else None
