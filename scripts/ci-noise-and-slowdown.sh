#!/usr/bin/env bash
# Issue 30's H200 experiment for check's gate, rerunnable on any GPU machine from the repository root:
#   1. the default grid (auto) twice on the same commit, timed by the sweep's default noise rule; `check` of the
#      second against the first must pass (no false alarm), and the largest per-cell changes are printed beside
#      their gates;
#   2. the same sweep with every call slowed by PCT % (default 5) of its cell's median in the first
#      (scripts/slowed-sweep.py gpu); `check` must fail, and name every cell;
#   3. the same sweep with every call's host time raised by HOST_PCT % (default 100) of its cell's host_us in the
#      first (scripts/slowed-sweep.py host); `check` must fail on the host cost (issue 29): auto's median over its
#      cells past the host threshold.
# Usage: scripts/ci-noise-and-slowdown.sh OUT_DIR [PCT [HOST_PCT]]
# (Before the noise rule, this script slowed the ci sweep's fused by num_warps = 1: docs/perf-notes.md, 2026-11-29.)
set -uo pipefail
out=${1:?usage: $0 OUT_DIR [PCT]}
pct=${2:-5}
host_pct=${3:-100}
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH}
sb() { python3 -m softmax_bench "$@"; }
grid=(--preset default --variant auto --out "$out")

for run_id in noise-reference noise-rerun; do
  start=$SECONDS
  sb sweep "${grid[@]}" --run-id "$run_id" > "$out.$run_id.log" 2>&1 || { tail -5 "$out.$run_id.log"; exit 1; }
  echo "sweep $run_id: $((SECONDS - start)) s wall"
done
gates() {  # the cells of a check, the largest changes first, and how many regressed
  python3 - "$out" "$1" <<'PY'
import sys
from pathlib import Path
from softmax_bench.regression import check
from softmax_bench.results import open_run
out, run_id = Path(sys.argv[1]), sys.argv[2]
result = check(open_run(run_id, out), open_run("noise-reference", out))
print(f"{run_id}: {len(result.regressions)} of {len(result.changes)} cells regressed; host cost: "
      f"{len(result.host_regressions)} of {len(result.host_changes)} variants past {result.host_threshold:g} %")
for c in sorted(result.changes, key=lambda c: abs(c.change), reverse=True)[:5]:
    print(f"  {c.cell}: {c.base_pct:.2f} -> {c.pct:.2f} % of copy ({c.change:+.2f} %, gate ±{c.gate(result.threshold):.2f} %)")
for g in result.host_changes:
    print(f"  host cost: {g}")
    for h in sorted(g.cells, key=lambda h: abs(h.change), reverse=True)[:3]:
        print(f"    {h.cell}: host {h.base_us:.1f} -> {h.us:.1f} µs (copy's {h.base_copy_us:.1f} -> "
              f"{h.copy_us:.1f}): {h.change:+.1f} % a copy's µs")
PY
}
sb check noise-rerun --baseline noise-reference --out "$out" --summary "$out/check-rerun.md" > /dev/null
echo "check rerun against reference: exit $? (0: no false alarm)"
gates noise-rerun

python3 scripts/slowed-sweep.py gpu "$out/noise-reference" "$pct" "${grid[@]}" --run-id noise-slowed \
  > "$out.noise-slowed.log" 2>&1 || { tail -5 "$out.noise-slowed.log"; exit 1; }
sb check noise-slowed --baseline noise-reference --out "$out" --summary "$out/check-slowed.md" > /dev/null
echo "check slowed by $pct % against reference: exit $? (1: caught)"
gates noise-slowed

python3 scripts/slowed-sweep.py host "$out/noise-reference" "$host_pct" "${grid[@]}" --run-id noise-host-slowed \
  > "$out.noise-host-slowed.log" 2>&1 || { tail -5 "$out.noise-host-slowed.log"; exit 1; }
sb check noise-host-slowed --baseline noise-reference --out "$out" --summary "$out/check-host-slowed.md" > /dev/null
echo "check host slowed by $host_pct % against reference: exit $? (1: caught)"
gates noise-host-slowed
