#!/usr/bin/env bash
# The eighty-sixth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-08-session86/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. No device came in the eighty-sixth session: none has run yet.
# first (any card; LEFT_S): session 85's `checks` (its filter takes this session's GPU tests of the mask in bits:
#   "shared"); then on an H200 session 85's `bars` (the gate of issue 26: the H200's bar sweeps of the broadcast
#   forms, stale since session 66); on another card `bits`, session 85's `replay-ab`, session 83's `words`, `rows`.
# second (an H200; LEFT_S): session 85's `bars` for the forms in FORMS (those `first` did not reach), `bits`, then
#   session 79's `relaunched` (the cells bar-status.py lists as launched otherwise now).
# bits (any card; ~5 min): bits-ab.py (cluster.MASK_BITS and BACKWARD_MASK_BITS off and on, auto's call, 3 rounds;
#   the copies alone), then the bar's sweeps of key-padded bf16 8192x50257, its log and the log's backward, bits (a
#   switch) and byte copies: <bits|bytes>-<form>-<card>-s86.
# rows (any card; ~3 min): scaled-masked rows/16 and rows/4 at bf16 8192x50257, as launched now (too few rows a mask
#   row for copies: read a byte at a time) and in copies in bits from 2 rows a mask row (bits-rows<K>, bytes-rows<K>).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
s85=evidence/experiments/2026-12-08-session85/next.sh
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s85 checks
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s85 bars
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 bits
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s85 replay-ab
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session83/next.sh words
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 rows
  fi
fi
if [[ ${1:-} == second ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s85 bars
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 bits
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session79/next.sh relaunched
fi
if [[ ${1:-} == bits ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  if left 240; then
    timeout 240 python3 evidence/experiments/2026-12-08-session86/bits-ab.py > $OUT/bits-ab.txt 2>&1
    echo "bits-ab rc=$? at $SECONDS s"; cat $OUT/bits-ab.txt
  fi
  for form in key-padded key-padded-log; do
    log=; [[ $form == *-log ]] && log=--log
    left 40 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.MASK_BITS = True" bar_sweep \
      bits-$form-$tag-s86 --shape 8192x50257 --dtype bf16 --op key-padded $log
    left 40 && bar_sweep bytes-$form-$tag-s86 --shape 8192x50257 --dtype bf16 --op key-padded $log
  done
  left 40 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.BACKWARD_MASK_BITS = True" bar_sweep \
    bits-key-padded-log-backward-$tag-s86 --shape 8192x50257 --dtype bf16 --op key-padded --log --pass backward
  left 40 && bar_sweep bytes-key-padded-log-backward-$tag-s86 --shape 8192x50257 --dtype bf16 --op key-padded --log \
    --pass backward
fi
if [[ ${1:-} == rows ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  # fewer rows a mask row (rows/16, rows/4): read a byte at a time now (PHASED_FROM_ROWS' 32), against copies in bits
  for k in 16 4; do
    left 40 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.MASK_BITS = True; \
c.PHASED_FROM_ROWS = {'mask': 2, 'bias': 64}" bar_sweep bits-rows$k-$tag-s86 --shape 8192x50257 --dtype bf16 \
      --op scaled-masked --mask-shape rows/$k
    left 40 && bar_sweep bytes-rows$k-$tag-s86 --shape 8192x50257 --dtype bf16 --op scaled-masked --mask-shape rows/$k
  done
fi
