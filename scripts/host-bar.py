"""Issue 29's bar, read from scripts/host-cost.py's CSVs: a softmax_bench call's host µs against torch's in the same
process. Eager: auto's softmax, scaled-masked and log-softmax rows and fused's softmax row at ≤ 1.0× torch's call
of the op (torch.log_softmax for log-softmax, torch.softmax for the others). Compiled: compiled_op's row of each op
at ≤ 1.0× torch_compile's row of the same op.

A host's speed moves between processes by more than these ratios (the fortieth session's torch.softmax: 10.02 µs in
one process, 6.57 in the next), so a ratio is only taken within one CSV: one process of host-cost.py. A row of a
CSV given later replaces the same row of one given earlier (name them oldest first). Rows of an interpreted run
(no GPU) are left out. A row made with settings (host-cost.py's `settings` column: SOFTMAX_BENCH_* switches,
Inductor's static launch of user kernels) says so. Exit 0 when every bar row was measured and is at or under its
bar, 1 otherwise.

    python3 scripts/host-bar.py evidence/experiments/2026-12-05-session40/host/host-fast1.csv \\
        evidence/experiments/2026-12-05-session40/host/host-compiled.csv
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


def ratios(path: Path) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(what, op) → (host µs, the divisor row's host µs, their ratio) for each bar row a CSV has with its divisor."""
    with open(path, newline="") as f:
        rows = [row for row in csv.DictReader(f) if row.get("interpreted") != "True" and row.get("host_us")]
    host = {(row["what"], row["op"]): float(row["host_us"]) for row in rows}
    return {key: (host[key], host[versus], host[key] / host[versus])
            for key, versus in BAR_ROWS.items() if key in host and versus in host}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+", type=Path, help="host-cost.py's output, oldest first")
    args = parser.parse_args(argv)
    found: dict[tuple[str, str], tuple[float, float, float, Path, str]] = {}
    for path in args.csv:
        if not path.is_file():
            print(f"host-bar: no such file {path}", file=sys.stderr)
            return 2
        settings = settings_of(path)
        for key, figures in ratios(path).items():
            found[key] = (*figures, path, settings)
    met = True
    for key, (versus_what, _) in BAR_ROWS.items():
        what, op = key
        if key not in found:
            print(f"  not measured   {what} ({op}): no CSV has it beside {versus_what}")
            met = False
            continue
        host, versus, ratio, path, settings = found[key]
        verdict = "met" if ratio <= BAR else "over the bar"
        met &= ratio <= BAR
        print(f"  {verdict:14} {what} ({op}): {host:.2f} µs, {ratio:.2f}× {versus_what}'s {versus:.2f} "
              f"(bar {BAR:.1f}×; {path}" + (f"; made with {settings})" if settings else ")"))
    print("issue 29's bar: " + ("met" if met else "not met"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
