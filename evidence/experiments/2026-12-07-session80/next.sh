#!/usr/bin/env bash
# The eightieth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session80/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): session 79's `cap`, then on an H200 session 73's `all`; on another card `log-entries`,
#   then session 79's `fp32-phased`.
# log-entries (any card; ~4 min): two SHARED_BIASED_LOG entries chosen by compiling for sm_90 (this session): the
#   log of biased rows/64 in the forward's configuration where the log compiles to the forward's registers with no
#   more spill: bf16 151936 in 8 x 16, two pieces, capped at 64 (8 bytes spilled; the forward 16; BIASED's 8 x 8 now:
#   128 registers) and fp32 50257 in 16 x 8 capped at 48 (no spill; 64 registers under LOG_REGISTERS' 80 now).
#   Each cell as launched now (now-...) and with the entry (entry-...), twice.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
s79=evidence/experiments/2026-12-07-session79/next.sh
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s79 cap
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session73/next.sh all
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 log-entries
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $s79 fp32-phased
  fi
fi
if [[ ${1:-} == log-entries ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  set_entry="import softmax_bench.kernels.cluster as c; c.SHARED_BIASED_LOG[2][151936] = (8, 16, 2, 64); \
c.SHARED_BIASED_LOG[4][50257] = (16, 8, 1, 48)"
  for k in "" 2; do
    for cell in bf16:2048x151936 fp32:8192x50257; do
      args="--shape ${cell#*:} --dtype ${cell%%:*} --op biased --mask-shape rows/64 --log"
      left 30 && bar_sweep now-${cell%%:*}$k-$tag-s80 $args
      left 30 && SWEEP_SET=$set_entry bar_sweep entry-${cell%%:*}$k-$tag-s80 $args
    done
  done
fi
