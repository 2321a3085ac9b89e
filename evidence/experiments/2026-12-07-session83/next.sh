#!/usr/bin/env bash
# The eighty-third session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session83/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): `in-place` and `words` (the next session's first steps), then on an H200 session 82's
#   `first` (its `confirm`, then session 73's `all`). This session's call ran what is now `first-h100`: session 82's
#   `confirm` (the GPU tests not yet run there: a launch's phase record), `kernels`, then the GPU suite's second half
#   (session 73's `suite`, HALF=2, ~220 s on an H100) in what is left.
# second (any card; LEFT_S): on an H200, session 79's `h200b` (the log bar sweeps, the relaunched cells); on another
#   card, the GPU suite's first half (HALF=1, ~500 s on an H100).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
s82=evidence/experiments/2026-12-07-session82/next.sh
s73=evidence/experiments/2026-12-07-session73/next.sh
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 in-place
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 words
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s82 first
  fi
fi
if [[ ${1:-} == first-h100 ]]; then  # what this session's `first` ran on the H100
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s82 confirm
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS - 230 )) bash $0 kernels
  HALF=2 SUITE_S=$(( ${LEFT_S:-600} - SECONDS - 10 )) bash $s73 suite
fi
if [[ ${1:-} == second ]]; then
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session79/next.sh h200b
  else
    HALF=1 SUITE_S=$(( ${LEFT_S:-600} - SECONDS - 10 )) bash $s73 suite
  fi
fi
# kernels (any card; ~1.5 min): where auto's call spends its time by kernel (kernel-times.py: torch.profiler, L2
#   cleared before each call) at the cells under the bar on the H100 whose launch makes phase copies first:
#   key-padded and biased rows/64 bf16 8192x50257, and the key-padded log.
if [[ ${1:-} == kernels ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  here=evidence/experiments/2026-12-07-session83
  for cell in "key-padded bfloat16 8192 50257" "key-padded bfloat16 8192 50257 full log" \
      "biased bfloat16 8192 50257 rows/64" "biased bfloat16 2048 50257 rows/64" "key-padded float32 8192 50257"; do
    left 40 && timeout 90 python3 $here/kernel-times.py $cell >> $OUT/kernel-times.txt 2>&1
  done
  cat $OUT/kernel-times.txt
fi
# copies-scan (any card; ~1 min): phase_copies_kernel's BLOCK and num_warps on the copies of those cells
#   (copies-scan.py; the `kernels` step put them at 33.4 µs for key-padded bf16 8192x50257's mask, 48.6 for biased's).
if [[ ${1:-} == copies-scan ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 150 python3 evidence/experiments/2026-12-07-session83/copies-scan.py > $OUT/copies-scan.txt 2>&1
  echo "rc=$?"; cat $OUT/copies-scan.txt
fi
# words (any card; LEFT_S, ~3 min): the GPU tests of the phase copies; the copies by words against an element at a
#   time, the copies alone (words-ab.py, 3 rounds); then in sweeps, by words (a switch: COPIES_BY_WORDS is off until
#   this has run) and an element at a time, key-padded bf16 8192x50257 forward and log and biased rows/64 bf16
#   8192x50257, while time is left.
if [[ ${1:-} == words ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 60 python3 -m pytest -q -p no:cacheprovider -n 4 -rfE tests/test_cluster.py -k "phase_copies" \
    > $OUT/tests-words.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-words.txt)"
  timeout 90 python3 evidence/experiments/2026-12-07-session83/words-ab.py > $OUT/words-ab.txt 2>&1
  echo "rc=$?"; cat $OUT/words-ab.txt
  by_words="import softmax_bench.kernels.masking as m; m.COPIES_BY_WORDS = True"
  for form in key-padded key-padded-log biased-rows64; do
    op=${form%-log}; op=${op%-rows64}; log=; [[ $form == *-log ]] && log=--log
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 25 && SWEEP_SET=$by_words bar_sweep words-$form-$tag-s83 --shape 8192x50257 --dtype bf16 --op $op $log \
      $shape
    left 25 && bar_sweep elements-$form-$tag-s83 --shape 8192x50257 --dtype bf16 --op $op $log $shape
  done
fi
# in-place (any card; LEFT_S, ~3 min): cluster.MASK_IN_PLACE (off: a forward's shared byte mask off x's grid read
#   where it lies, no phase copies), its GPU tests (the same bits as the copies, float64), then key-padded bf16
#   8192x50257 forward and log with it on (a switch) and off, twice, while time is left.
if [[ ${1:-} == in-place ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 100 python3 -m pytest -q -p no:cacheprovider -n 4 -rfE tests/test_cluster.py -k "read_in_place or phase" \
    > $OUT/tests-in-place.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-in-place.txt)"
  grep -E "^(FAILED|ERROR)" $OUT/tests-in-place.txt
  on="import softmax_bench.kernels.cluster as c; c.MASK_IN_PLACE = True"
  for round in 1 2; do
    for log in "" --log; do
      left 25 && SWEEP_SET=$on bar_sweep in-place$log-$round-$tag-s83 --shape 8192x50257 --dtype bf16 --op key-padded \
        $log
      left 25 && bar_sweep copied$log-$round-$tag-s83 --shape 8192x50257 --dtype bf16 --op key-padded $log
    done
  done
fi
