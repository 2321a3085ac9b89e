#!/usr/bin/env bash
# The eighty-fourth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session84/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): session 83's `in-place` (the shared mask read in place: GPU tests, then key-padded bf16
#   8192x50257 forward and log with MASK_IN_PLACE on and off, twice), `bias-in-place`, then on an H200 session 82's
#   `first` (session 73's `all`: the bar sweeps); on another card session 83's `words`.
# bias-in-place (any card; LEFT_S, ~3 min): cluster.BIAS_IN_PLACE (off: a forward's shared 16-bit bias off x's grid
#   read where it lies, no phase copies), its GPU tests (the same bits as the copies, float64), then biased rows/64
#   bf16 8192x50257 forward and log with it on (a switch) and off, twice, while time is left.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
s83=evidence/experiments/2026-12-07-session83/next.sh
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s83 in-place
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 bias-in-place
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session82/next.sh first
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s83 words
  fi
fi
if [[ ${1:-} == bias-in-place ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 100 python3 -m pytest -q -p no:cacheprovider -n 4 -rfE tests/test_cluster.py -k "bias_read_in_place" \
    > $OUT/tests-bias-in-place.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-bias-in-place.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/tests-bias-in-place.txt
  on="import softmax_bench.kernels.cluster as c; c.BIAS_IN_PLACE = True"
  for round in 1 2; do
    for log in "" --log; do
      left 25 && SWEEP_SET=$on bar_sweep bias-in-place$log-$round-$tag-s84 --shape 8192x50257 --dtype bf16 \
        --op biased --mask-shape rows/64 $log
      left 25 && bar_sweep bias-copied$log-$round-$tag-s84 --shape 8192x50257 --dtype bf16 --op biased \
        --mask-shape rows/64 $log
    done
  done
fi
