#!/usr/bin/env bash
# The seventy-eighth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session78/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# ncu (any card; ~4 min): Nsight Compute's speed of light, memory tables, warp states and occupancy of auto's
#   kernels at the cells where a shared row (bias or mask) leaves the cluster kernel under its roofline, beside the
#   same kernel with a full bias (mask) and a cell at the roofline (ncu-<cell>.csv, one file a cell,
#   --page raw), then a line a kernel of them (ncu-summary.py).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
here=evidence/experiments/2026-12-07-session78
# first (any card; LEFT_S): on an H200 session 73's `all` (the bar's GPU tests and sweeps), else `ncu`.
if [[ ${1:-} == first ]]; then
  step=ncu; [[ $tag == h200 ]] && step=all
  [[ $step == all ]] && script=evidence/experiments/2026-12-07-session73/next.sh || script=$0
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $script $step
fi
if [[ ${1:-} == ncu ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1); echo "ncu: $ncu"
  sections="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
--section WarpStateStats --section Occupancy --section LaunchStats --section SchedulerStats"
  while read -r name cell; do
    left 40 || break
    timeout 90 $ncu --clock-control none --profile-from-start off $sections --csv --page raw \
      python3 $here/ncu-cell.py $cell > $OUT/ncu-$name.csv 2> $OUT/ncu-$name.err
    echo "$name rc=$? at $SECONDS s: $(grep -c . $OUT/ncu-$name.csv) lines"
  done <<'CELLS'
bias64-bf16-262144 biased bfloat16 512 262144 rows/64
biasfull-bf16-262144 biased bfloat16 512 262144 full
bias64-fp32-262144 biased float32 512 262144 rows/64
padded-bf16-50257 key-padded bfloat16 8192 50257
period16-bf16-50257 scaled-masked bfloat16 8192 50257 period/16
bias64-bf16-151936 biased bfloat16 2048 151936 rows/64
bias64-bf16-32768 biased bfloat16 4096 32768 rows/64
biasp16-bf16-262144 biased bfloat16 512 262144 period/16
CELLS
  python3 $here/ncu-summary.py $OUT
fi
