#!/usr/bin/env bash
# The eighty-second session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session82/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): `confirm`, then on an H200 session 73's `all`; on another card the rest of session 79's
#   `fp32-phased` (`phased`), then session 79's `log-scan` at bf16 262144 (the one width of three not yet given an
#   entry).
# confirm (any card; ~2.5 min): the two SHARED_BIASED_LOG entries landed this session (bf16 151936, fp32 50257): the
#   GPU tests of a shared bias in its own configuration, and (since d8fb187) of a launch's record of its phase copies
#   (tests-confirm.txt), then both cells as committed
#   (confirm-<dtype>-<card>-s82), auto beside torch_compile.
# phased (any card; ~3 min): session 79's fp32-phased without its test and its first sweep (inplace-softmax ran in
#   this session's first call): phased softmax, then in place and phased log, once.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
s79=evidence/experiments/2026-12-07-session79/next.sh
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 confirm
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session73/next.sh all
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 phased
    WIDTHS=262144 LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s79 log-scan
  fi
fi
if [[ ${1:-} == confirm ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py \
    -k "shared_bias_in_its_own_configuration or records_the_shared_rows" > $OUT/tests-confirm.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-confirm.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-confirm.txt | head
  for cell in bf16:2048x151936 fp32:8192x50257; do
    left 30 && bar_sweep confirm-${cell%%:*}-$tag-s82 --shape ${cell#*:} --dtype ${cell%%:*} --op biased \
      --mask-shape rows/64 --log
  done
fi
if [[ ${1:-} == phased ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 8192x50257 --shape 2048x50257 --dtype fp32 --op biased --mask-shape rows/64"
  phased="import softmax_bench.kernels.cluster as c; c.PHASED_BIAS_ITEMSIZES = (2, 4)"
  left 30 && SWEEP_SET=$phased bar_sweep phased-softmax-$tag-s82 $cells
  left 30 && bar_sweep inplace-log-$tag-s82 $cells --log
  left 30 && SWEEP_SET=$phased bar_sweep phased-log-$tag-s82 $cells --log
fi
