#!/usr/bin/env bash
# The eighty-fifth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-08-session85/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): `replay`, then on an H200 session 82's `first` (the bar sweeps); on another card
#   session 83's `words`.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 replay
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session82/next.sh first
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session83/next.sh words
  fi
fi
# replay (any card; ~3 min): the GPU tests of a call with phase copies replayed (test_cluster: its plan's copies of
#   its own, the long way's bits) and test_replay's GPU tests, then replay-ab.py (replayed against the long way).
if [[ ${1:-} == replay ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py tests/test_replay.py \
    -k "replay or phase" > $OUT/tests-replay.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/tests-replay.txt
  timeout 240 python3 evidence/experiments/2026-12-08-session85/replay-ab.py > $OUT/replay-ab.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; cat $OUT/replay-ab.txt
fi
