"""Issue 29's bar, read from scripts/host-cost.py's CSVs: a softmax_bench call's host µs against torch's in the same
process. Eager: auto's softmax, scaled-masked and log-softmax rows and fused's softmax row at ≤ 1.0× torch's call
of the op (torch.log_softmax for log-softmax, torch.softmax for the others). Compiled: compiled_op's row of each op
at ≤ 1.0× torch_compile's row of the same op.

A host's speed moves between processes by more than these ratios (the fortieth session's torch.softmax: 10.02 µs in
one process, 6.57 in the next), so a ratio is only taken within one CSV: one process of host-cost.py. Within it the
host's speed moves too (the fifty-eighth session's H200: auto's softmax over torch's 0.84× to 1.23× from the medians
of 5 rounds): where both rows have each round's host µs (host-cost.py's host_us_rounds, taken in turn), the ratio is
the median of the rounds' ratios, round k of one row over round k of the other, and its 20th–80th percentiles are
printed; otherwise the ratio of the two medians. A row of a CSV given later replaces the same row of one given
earlier (name them oldest first); with --pool the CSVs are processes of the same code, and a bar row's ratio is the
median of every process's rounds' ratios together (each ratio still within its own process). A row over its bar by
its median but under it in a fifth or more of its rounds (p20 ≤ 1.0) is printed "at the bar": level with its
divisor within the rounds' spread, and still not met. Rows of an interpreted run
(no GPU) are left out. A row made with settings (host-cost.py's `settings` column: SOFTMAX_BENCH_* switches,
Inductor's static launch of user kernels) says so. Exit 0 when every bar row was measured and is at or under its
bar, 1 otherwise.

    python3 scripts/host-bar.py evidence/experiments/2026-12-05-session40/host/host-fast1.csv \\
        evidence/experiments/2026-12-05-session40/host/host-compiled.csv
    python3 scripts/host-bar.py --pool evidence/experiments/2026-12-06-session59/out-h100/host-bar/*.csv
"""

import argparse
import csv
import sys
from pathlib import Path

BAR = 1.0  # a bar row's host µs over its divisor's
TORCH_LOG = ("torch.log_softmax", "log-softmax")
TORCH = ("torch.softmax", "softmax")
# (what, op) of a bar row → (what, op) of the row it is divided by: torch's call of the op, as host-cost.py's vs_torch
BAR_ROWS = {("softmax_bench auto", "softmax"): TORCH, ("softmax_bench fused", "softmax"): TORCH,
            ("softmax_bench auto", "scaled-masked"): TORCH, ("softmax_bench auto", "log-softmax"): TORCH_LOG,
            **{("peer compiled_op", op): ("peer torch_compile", op) for op in ("softmax", "scaled-masked")}}


def settings_of(path: Path) -> str:
    """The settings host-cost.py's process ran with, as its CSV records them ("" where none was set, or the CSV is
    older than the column)."""
    with open(path, newline="") as f:
        return next((row.get("settings") or "" for row in csv.DictReader(f)), "")


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of values, the nearest rank's (q = 0.5: the median of an odd count)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def paired(rounds: str, versus_rounds: str) -> list[float] | None:
    """Each round's host µs of one row over the same round's of another, where both rows have their rounds, as many
    of them (taken in turn by one host-cost.py process); None otherwise."""
    mine, theirs = (rounds or "").split(), (versus_rounds or "").split()
    if not mine or len(mine) != len(theirs):
        return None
    return [float(a) / float(b) for a, b in zip(mine, theirs)]


def ratios(path: Path) -> dict[tuple[str, str], tuple[float, float, float, tuple[float, float, int] | None]]:
    """(what, op) → (host µs, the divisor row's host µs, their ratio, the rounds' ratios' (p20, p80, count) or None)
    for each bar row a CSV has with its divisor: the ratio is the median of the rounds' ratios where both rows have
    their rounds, the ratio of the medians otherwise."""
    return {key: summary(host, versus_host, each) for key, (host, versus_host, each) in round_ratios(path).items()}


def summary(host: float, versus_host: float, each: list[float] | None) -> tuple:
    """ratios' entry from the rounds' ratios (None: the ratio of the medians)."""
    if each is None:
        return host, versus_host, host / versus_host, None
    return host, versus_host, quantile(each, 0.5), (quantile(each, 0.2), quantile(each, 0.8), len(each))


def round_ratios(path: Path) -> dict[tuple[str, str], tuple[float, float, list[float] | None]]:
    """(what, op) → (host µs, the divisor row's host µs, the rounds' ratios or None) for each bar row a CSV has with
    its divisor."""
    with open(path, newline="") as f:
        rows = [row for row in csv.DictReader(f) if row.get("interpreted") != "True" and row.get("host_us")]
    by_key = {(row["what"], row["op"]): row for row in rows}
    found = {}
    for key, versus in BAR_ROWS.items():
        if key not in by_key or versus not in by_key:
            continue
        host, versus_host = float(by_key[key]["host_us"]), float(by_key[versus]["host_us"])
        found[key] = (host, versus_host,
                      paired(by_key[key].get("host_us_rounds"), by_key[versus].get("host_us_rounds")))
    return found


def pooled(paths: list[Path]) -> dict[tuple[str, str], tuple]:
    """ratios' entries over processes of the same code: each bar row's rounds' ratios of every CSV together (the
    median of the medians' ratios where a CSV lacks the rounds), its host µs and its divisor's the processes'
    medians."""
    found: dict[tuple[str, str], list] = {}
    for path in paths:
        for key, figures in round_ratios(path).items():
            found.setdefault(key, []).append(figures)
    pools = {}
    for key, processes in found.items():
        host, versus = (quantile([figures[i] for figures in processes], 0.5) for i in (0, 1))
        if all(each is not None for _, _, each in processes):
            pools[key] = summary(host, versus, [r for _, _, each in processes for r in each])
        else:
            pools[key] = (host, versus, quantile([h / v for h, v, _ in processes], 0.5), None)
    return pools


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", type=Path, help="host-cost.py's output, oldest first")
    parser.add_argument("--pool", action="store_true",
                        help="the CSVs are processes of the same code: each bar row's rounds' ratios of all of "
                             "them together, not the last CSV's")
    args = parser.parse_args(argv)
    found: dict[tuple[str, str], tuple] = {}
    for path in args.csv:
        if not path.is_file():
            print(f"host-bar: no such file {path}", file=sys.stderr)
            return 2
        settings = settings_of(path)
        for key, figures in ratios(path).items():
            found[key] = (*figures, path, settings)
    if args.pool:
        where = f"{len(args.csv)} processes pooled"
        found = {key: (*figures, where, found[key][-1]) for key, figures in pooled(args.csv).items()}
    met = True
    level = 0
    for key, (versus_what, _) in BAR_ROWS.items():
        what, op = key
        if key not in found:
            print(f"  not measured   {what} ({op}): no CSV has it beside {versus_what}")
            met = False
            continue
        host, versus, ratio, spread, path, settings = found[key]
        at_the_bar = ratio > BAR and spread is not None and spread[0] <= BAR
        verdict = "met" if ratio <= BAR else "at the bar" if at_the_bar else "over the bar"
        met &= ratio <= BAR
        level += at_the_bar
        rounds = "" if spread is None else \
            f", round by round over {spread[2]}: p20–p80 {spread[0]:.2f}–{spread[1]:.2f}×"
        shown = f"{ratio:.2f}" if f"{ratio:.2f}" != f"{BAR:.2f}" or ratio == BAR else f"{ratio:.3f}"  # not 1.00× over
        print(f"  {verdict:14} {what} ({op}): {host:.2f} µs, {shown}× {versus_what}'s {versus:.2f}{rounds} "
              f"(bar {BAR:.1f}×; {path}" + (f"; made with {settings})" if settings else ")"))
    print("issue 29's bar: " + ("met" if met else "not met") + (
        f" ({level} row{'s' * (level != 1)} at the bar: over it by the median of its rounds, under it in a fifth or "
        f"more of them)" if level else ""))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
