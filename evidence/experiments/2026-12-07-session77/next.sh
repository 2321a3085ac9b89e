#!/usr/bin/env bash
# The seventy-seventh session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session77/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# entries (any card; ~2 min): biased rows/64, softmax, at the cells whose biased-scan (this session, H100) found a
#   configuration ahead of the launch's: bf16 4096x32768 (8 x 4), bf16 2048x151936 (8 x 16 capped at 64), bf16
#   1024x131072 (8 x 8 capped at 80), auto beside torch_compile as committed (entries-before-<card>-s77), then with
#   them in SHARED_BIASED (entries-scan-<card>-s77).
# first (any card; LEFT_S, up to ~9 min): the next session's first call. On an H200, session 73's `all` (the bar's
#   GPU tests and sweeps); on another card the GPU tests this session's commits touched (tests-s77.txt), then
#   `in-turn`, `confirm` and `l2-lines`, as time allows.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == first ]]; then
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session73/next.sh all
  else
    . .ab/device-setup.sh > /dev/null
    timeout 90 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py \
      -k "float64_result or in_order_bit_for_bit or phase_copies_only or shared_mask_is_read" > $OUT/tests-s77.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-s77.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-s77.txt | head
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 in-turn
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 confirm
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 l2-lines
  fi
fi
if [[ ${1:-} == entries ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 4096x32768 --shape 2048x151936 --shape 1024x131072 --dtype bf16 --op biased --mask-shape rows/64"
  entries="import softmax_bench.kernels.cluster as c; s = c.SHARED_BIASED[2]; \
s[32768] = (8, 4, 1, None); s[151936] = (8, 16, 1, 64); s[131072] = (8, 8, 1, 80)"
  left 50 && bar_sweep entries-before-$tag-s77 $cells
  left 50 && SWEEP_SET=$entries bar_sweep entries-scan-$tag-s77 $cells
  left 50 && bar_sweep entries-before2-$tag-s77 $cells
  left 50 && SWEEP_SET=$entries bar_sweep entries-scan2-$tag-s77 $cells
fi
# log-entries (any card; ~2 min): the same entries for biased rows/64's log, which reads BIASED (not SHARED_BIASED):
#   bf16 4096x32768 and 2048x151936 --log as committed (log-before-<card>-s77), then with BIASED[2] given them
#   (log-scan-<card>-s77), twice.
if [[ ${1:-} == log-entries ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 4096x32768 --shape 2048x151936 --dtype bf16 --op biased --mask-shape rows/64 --log"
  entries="import softmax_bench.kernels.cluster as c; s = c.BIASED[2]; s[32768] = (8, 4, 1, None); s[151936] = (8, 16, 1, 64)"
  for k in "" 2; do
    left 40 && bar_sweep log-before$k-$tag-s77 $cells
    left 40 && SWEEP_SET=$entries bar_sweep log-scan$k-$tag-s77 $cells
  done
fi
# fp32-262144 (any card; ~2.5 min): biased rows/64 fp32 512x262144, softmax and log, as committed (wide-before) and
#   in 16 x 4 capped at 168 registers (wide-scan: three CTAs an SM, 32 bytes spilled), twice.
if [[ ${1:-} == fp32-262144 ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  entries="import softmax_bench.kernels.cluster as c; c.SHARED_BIASED[4][262144] = c.BIASED[4][262144] = (16, 4, 1, 168)"
  for k in "" 2; do
    for log in "" --log; do
      left 30 && bar_sweep wide-before$k${log:+-log}-$tag-s77 --shape 512x262144 --dtype fp32 --op biased --mask-shape rows/64 $log
      left 30 && SWEEP_SET=$entries bar_sweep wide-scan$k${log:+-log}-$tag-s77 --shape 512x262144 --dtype fp32 --op biased --mask-shape rows/64 $log
    done
  done
fi
# confirm (any card; ~1.5 min): the scan's two bests not yet A/B'd in a sweep, as committed (confirm-before) and
#   given them (confirm-scan): biased rows/64 bf16 2048x151936 in 8 x 16, two pieces, capped at 64 (16 bytes spilled;
#   scan 86.2 against 78.5), fp32 1024x131072 in 16 x 8 capped at 80 (scan 100.0 against 96.8).
if [[ ${1:-} == confirm ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 2048x151936 --shape 1024x131072 --dtype bf16 --dtype fp32 --op biased --mask-shape rows/64"
  entries="import softmax_bench.kernels.cluster as c; c.SHARED_BIASED[2][151936] = (8, 16, 2, 64); \
c.SHARED_BIASED[4][131072] = (16, 8, 1, 80)"
  left 35 && bar_sweep confirm-before-$tag-s77 $cells
  left 35 && SWEEP_SET=$entries bar_sweep confirm-scan-$tag-s77 $cells
fi
# l2-lines (any card; ~2.5 min): is a shared bias row slow because it comes from L2, or because every cluster in
#   flight reads the same L2 lines at once? Biased, softmax, bf16 and fp32 at 512x262144 and 2048x151936, auto beside
#   torch_compile, with the bias laid out rows/64 (64 consecutive rows share a row: the clusters in flight read one
#   row), then period/16 (row r reads row r mod 16: the clusters in flight read distinct rows, all of them in L2,
#   16 x 512 KB at most), then full (distinct rows from HBM), in one call (lines-<shape>-<card>-s77); then the same
#   three shapes of a keep-mask, scaled-masked bf16 8192x50257 (rows/64 is key-padded's 79.6 on an H100; phase
#   copies for both shared shapes: mask-lines-<shape>-<card>-s77).
if [[ ${1:-} == l2-lines ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 512x262144 --shape 2048x151936 --dtype bf16 --dtype fp32 --op biased"
  for shape in rows/64 period/16 full; do
    left 45 && bar_sweep lines-${shape/\//}-$tag-s77 $cells --mask-shape $shape
  done
  for shape in rows/64 period/16 full; do
    left 30 && bar_sweep mask-lines-${shape/\//}-$tag-s77 --shape 8192x50257 --dtype bf16 --op scaled-masked \
      --mask-shape $shape
  done
fi
# in-turn (any card; ~2.5 min): cluster.GROUPS_IN_TURN 0 (rows in order, as committed: in-order-<card>-s77) against
#   16 (in-turn-<card>-s77): biased rows/64 at the bar's cluster widths, bf16 and fp32, then key-padded at
#   8192x50257; then both again if time allows (…2-…).
if [[ ${1:-} == in-turn ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  biased="--shape 4096x32768 --shape 8192x50257 --shape 4096x128256 --shape 2048x151936 --shape 512x262144 \
--dtype bf16 --dtype fp32 --op biased --mask-shape rows/64"
  padded="--shape 8192x50257 --dtype bf16 --dtype fp32 --op key-padded"
  on="import softmax_bench.kernels.cluster as c; c.GROUPS_IN_TURN = 16"
  for k in "" 2; do
    left 60 && bar_sweep in-order$k-$tag-s77 $biased
    left 60 && SWEEP_SET=$on bar_sweep in-turn$k-$tag-s77 $biased
    left 30 && bar_sweep in-order-padded$k-$tag-s77 $padded
    left 30 && SWEEP_SET=$on bar_sweep in-turn-padded$k-$tag-s77 $padded
  done
fi
