#!/usr/bin/env bash
# The eighty-fifth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-08-session85/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. No device came in the eighty-fifth session: none has run yet.
# first (any card; LEFT_S): `checks`; then on an H200 `bars` while time is left; on another card `replay-ab`, then
#   session 83's `words`.
# checks (any card; ~2–3 min): the GPU tests of this session's replayed phase copies (test_replay, test_launcher, and
#   test_cluster's replay and phase tests: a plan's copies of its own, the long way's bits) and of the shared rows,
#   the bias and the broadcast forms (session 73's filter over test_cluster_backward, test_fusion, test_bias).
# replay-ab (any card; ~3 min): replay-ab.py, a call with phase copies replayed against the long way (ms, call_ms,
#   host_us; the same bits).
# bars (an H200; LEFT_S): the bar's sweeps of the broadcast forms, stale on the H200 since session 66, auto beside
#   torch_compile over the default grid, the forms in FORMS (default: key-padded biased-rows64 key-padded-log
#   biased-rows64-log key-padded-log-backward), ~100 s each (bar-<form>-<card>-s85). A second call names the forms
#   the first did not reach; then session 79's `h200b` (the relaunched cells: biased bf16 512x262144, causal and its
#   log fp32 512x262144).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 checks
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 bars
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 replay-ab
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session83/next.sh words
  fi
fi
if [[ ${1:-} == checks ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 180 python3 -m pytest -q -p no:cacheprovider -n 12 -rfE tests/test_replay.py tests/test_launcher.py \
    tests/test_cluster.py tests/test_cluster_backward.py tests/test_fusion.py tests/test_bias.py \
    -k "replay or launcher or phase or shift or once or broadcast or shared or keep or bias" > $OUT/tests-checks.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-checks.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/tests-checks.txt | head -20
fi
if [[ ${1:-} == replay-ab ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 240 python3 evidence/experiments/2026-12-08-session85/replay-ab.py > $OUT/replay-ab.txt 2>&1
  echo "replay-ab rc=$? at $SECONDS s"; cat $OUT/replay-ab.txt
fi
if [[ ${1:-} == bars ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  for form in ${FORMS:-key-padded biased-rows64 key-padded-log biased-rows64-log key-padded-log-backward}; do
    op=key-padded; [[ $form == biased* ]] && op=biased
    log=; [[ $form == *-log* ]] && log=--log
    pass=; [[ $form == *-backward ]] && pass="--pass backward"
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 100 && bar_sweep bar-$form-$tag-s85 --preset default --op $op $log $pass $shape
  done
fi
