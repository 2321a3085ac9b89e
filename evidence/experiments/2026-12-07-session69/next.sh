#!/usr/bin/env bash
# The sixty-ninth session's device steps: bash evidence/experiments/2026-12-07-session69/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal.
# first (an H200; one call of ~10 min): session 68's shared-row in its first 320 s (the gate of three bar cells: biased
#   bf16 512x262144 and its log, causal log fp32), then session 67's backward-shared in what is left (the key-padded
#   log backward: 16 cells under the bar by the floor, 8 with a peer ahead); the patches phased and bias-once after.
# rows-held (any card; ~4 min): session 67's bias-once.patch applied, rows-held-probe.py (its docstring): fused programs
#   of 1, 2 and 4 rows of one group of a rows/64 bias at the one-row widths; the patch reversed.
set -u
here=evidence/experiments/2026-12-07-session69
. evidence/experiments/device-step.sh  # card, tag, pack, left
if [[ ${1:-} == first ]]; then
  LEFT_S=320 bash evidence/experiments/2026-12-06-session68/next.sh shared-row
  for step in backward-shared phased bias-once; do
    left 60 && LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-06-session67/next.sh $step
  done
fi
if [[ ${1:-} == rows-held ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  patch -s -p1 < evidence/experiments/2026-12-06-session67/bias-once.patch || { echo "bias-once.patch does not apply"; exit 1; }
  timeout $(( ${LEFT_S:-600} - 15 )) python3 $here/rows-held-probe.py > $OUT/rows-held.txt 2>&1
  echo "probe rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/rows-held.txt | tail -17
  patch -s -R -p1 < evidence/experiments/2026-12-06-session67/bias-once.patch
fi
