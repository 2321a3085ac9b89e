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
# first (any card; LEFT_S): `phase-copies`, then on an H200 session 73's `all` (the bar's GPU tests and sweeps).
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 phase-copies
  [[ $tag == h200 ]] && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session73/next.sh all
fi
# phase-copies (any card; ~4 min): masking.phase_copies_kernel, which makes a shared row's phase copies (key-padded
#   and biased rows/64 at 8192x50257 in this session's ncu: torch's strided copy_ took 102 of key-padded bf16's
#   685 us). The GPU tests of shared and phased rows (tests-phase.txt), then auto beside torch_compile with the
#   copies as torch made them (copies-torch-<card>-s78: torch-phase-copies.py) and as committed (copies-kernel-...),
#   twice: key-padded and biased rows/64 at 8192x50257 and 2048x50257, bf16 and fp32, and the key-padded log's
#   backward at 8192x50257.
if [[ ${1:-} == phase-copies ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py tests/test_cluster_backward.py \
    tests/test_bias.py -k "phase or shared or padded" > $OUT/tests-phase.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-phase.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-phase.txt | head
  old="import runpy; runpy.run_path('$here/torch-phase-copies.py')"
  cells="--shape 8192x50257 --shape 2048x50257 --dtype bf16 --dtype fp32"
  for k in "" 2; do
    left 40 && SWEEP_SET=$old bar_sweep copies-torch$k-$tag-s78 $cells --op key-padded
    left 40 && bar_sweep copies-kernel$k-$tag-s78 $cells --op key-padded
    left 40 && SWEEP_SET=$old bar_sweep biased-copies-torch$k-$tag-s78 $cells --op biased --mask-shape rows/64
    left 40 && bar_sweep biased-copies-kernel$k-$tag-s78 $cells --op biased --mask-shape rows/64
  done
  left 40 && SWEEP_SET=$old bar_sweep backward-copies-torch-$tag-s78 --shape 8192x50257 --dtype bf16 --dtype fp32 \
    --op key-padded --log --pass backward
  left 40 && bar_sweep backward-copies-kernel-$tag-s78 --shape 8192x50257 --dtype bf16 --dtype fp32 --op key-padded \
    --log --pass backward
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
