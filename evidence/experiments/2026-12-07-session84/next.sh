#!/usr/bin/env bash
# The eighty-fourth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session84/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): `ab`, then on an H200 session 82's `first` (session 73's `all`: the bar sweeps); on
#   another card `sweeps`, then session 83's `words` while time is left.
# ab (any card; ~3 min): the GPU tests of the shared mask and the shared bias read in place (cluster.MASK_IN_PLACE,
#   BIAS_IN_PLACE: the same bits as the phase copies, float64) and of the copies, then inplace-ab.py (auto's call,
#   each switch off and on, 3 rounds, key-padded and biased rows/64 bf16 8192x50257, softmax and log).
# sweeps (any card; LEFT_S): the same cells in sweeps, auto beside torch_compile, each switch on (a switch) and off,
#   once: <in-place|copied>-<form>-<card>-s84.
# host (any card; ~1 min): host-profile.py, where a launch with phase copies spends its 328–416 µs of host a call.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 ab
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session82/next.sh first
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 sweeps
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session83/next.sh words
  fi
fi
if [[ ${1:-} == ab ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py -k "read_in_place or phase" \
    > $OUT/tests-in-place.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-in-place.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/tests-in-place.txt
  timeout 180 python3 evidence/experiments/2026-12-07-session84/inplace-ab.py > $OUT/inplace-ab.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; cat $OUT/inplace-ab.txt
fi
if [[ ${1:-} == sweeps ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  for form in key-padded biased-rows64 key-padded-log biased-rows64-log; do
    op=key-padded; shape=; switch=MASK_IN_PLACE
    [[ $form == biased* ]] && { op=biased; shape="--mask-shape rows/64"; switch=BIAS_IN_PLACE; }
    log=; [[ $form == *-log ]] && log=--log
    left 40 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.$switch = True" bar_sweep \
      in-place-$form-$tag-s84 --shape 8192x50257 --dtype bf16 --op $op $shape $log
    left 40 && bar_sweep copied-$form-$tag-s84 --shape 8192x50257 --dtype bf16 --op $op $shape $log
  done
fi
if [[ ${1:-} == host ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 120 python3 evidence/experiments/2026-12-07-session84/host-profile.py > $OUT/host-profile.txt 2>&1
  echo "rc=$?"; grep -A45 "^==" $OUT/host-profile.txt | cut -c1-160
fi
