#!/usr/bin/env bash
# Issue 5's H200 experiment, rerunnable on any GPU machine from the repository root:
#   1. the ci sweep twice on the same commit; `check` of the second against the first must pass, and the largest
#      per-cell difference in % of copy is the noise floor the threshold must sit above;
#   2. the same sweep with fused forced to num_warps = 1 (a deliberate slowdown); `check` must catch it.
# Usage: scripts/ci-noise-and-slowdown.sh OUT_DIR
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
sb() { PYTHONPATH=. python3 -m softmax_bench "$@"; }

for run_id in ci-reference-h200 ci-rerun-h200; do
  start=$SECONDS
  sb sweep --config configs/ci.toml --out "$out" --run-id "$run_id"
  echo "sweep $run_id: $((SECONDS - start)) s wall"
done
sb check ci-rerun-h200 --baseline ci-reference-h200 --out "$out" --markdown "$out/check-rerun.md"
echo "check rerun against reference: exit $?"
PYTHONPATH=. python3 - "$out" <<'PY'
import sys
from pathlib import Path
from softmax_bench.regression import check
from softmax_bench.results import open_run
out = Path(sys.argv[1])
result = check(open_run("ci-rerun-h200", out), open_run("ci-reference-h200", out))
points = sorted(result.changes, key=lambda c: abs(c.pct - c.base_pct), reverse=True)
for c in points[:5]:
    print(f"noise: {c.cell}: {c.base_pct:.2f} -> {c.pct:.2f} % of copy ({c.pct - c.base_pct:+.2f} points, {c.change:+.2f} %)")
PY

cp softmax_bench/kernels/fused.py /tmp/fused.py.orig
sed -i 's/^NUM_WARPS_BY_BLOCK = .*/NUM_WARPS_BY_BLOCK = ((2**62, 1),)  # deliberately slowed/' softmax_bench/kernels/fused.py
sb sweep --out "$out" --run-id ci-slowed-h200 --variant fused --dtype bf16 --dtype fp32 \
  --shape 2097152x32 --shape 131072x512 --shape 16384x4096 --shape 4096x16384
cp /tmp/fused.py.orig softmax_bench/kernels/fused.py
sb check ci-slowed-h200 --baseline ci-reference-h200 --out "$out" --markdown "$out/check-slowed.md"
echo "check slowed against reference: exit $?"
