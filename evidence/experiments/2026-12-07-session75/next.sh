#!/usr/bin/env bash
# The seventy-fifth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session75/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# scan-entries (any card; ~2 min): biased rows/64's wide cells at 8192x50257, 4096x128256, 2048x151936, 512x262144, in
#   bf16 and fp32, auto beside torch_compile with SHARED_BIASED as committed (shared-before-<card>-s75), then with the
#   entries session 75's biased-scan found ahead (shared-scan-<card>-s75): bf16 50257 2 x 8 capped at 128, bf16 151936
#   16 x 8 capped at 64, fp32 262144 16 x 4 capped at 168; bf16 128256 back to BIASED's 16 x 8 (ran at 3060ccb).
# h200b (an H200, after session 73's `all`; LEFT_S, ~8 min): the bar's sweeps `all` does not reach, auto beside
#   torch_compile over the default grid: the key-padded log and biased rows/64's log (bar-<form>-<card>-s75); then
#   the cells bar-status marks as measured in a launch the code no longer makes: biased bf16 512x262144 and causal
#   fp32 512x262144, softmax and log (relaunched-<op>[-log]-<card>-s75).
# mask-from-32 (any card; ~3 min): a shared mask's phase copies from 32 rows of x a row, where a bias's lost
#   (session 74's rows/32: scaled-masked bf16 8192x50257 in place 59.3, phased 69.1; biased 72.9 / 65.5).
#   scaled-masked rows/32 at 8192x50257 and 2048x50257, bf16 and fp32, with cluster.PHASED_FROM_ROWS 64 (in place)
#   and 32 (phased) (from32-<64|32>-<card>-s75); then the plain softmax at 8192x50257 (plain-50257-<card>-s75), what
#   key-padded's 79.6 there on the H100 is to be read against.
# shared-bias-rows (any card; ~4 min): shared_row.SHARED_BIAS_ROWS (a shared bias's rows held in shared memory as a
#   full bias's are, and fp32's by SHARED_BIAS_ROW_AT, its bias read from L2 at each pass; off as committed). Its GPU
#   tests (tests/test_shared_row.py), then biased rows/64 at 512x262144 and 1024x131072, bf16 and fp32, softmax and
#   log, auto beside torch_compile, off (sbr-off-<card>-s75) and on (sbr-on-<card>-s75; bf16 131072 given the
#   262144 entry, 16 x 8, for the probe; fp32 131072 has none, in registers in both: the control), then on with a
#   16-bit row's bias read from L2 at each pass too, not copied (sbr-read-<card>-s75; shared_row.bias_held False).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == scan-entries ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 8192x50257 --shape 4096x128256 --shape 2048x151936 --shape 512x262144 --dtype bf16 --dtype fp32"
  left 60 && bar_sweep shared-before-$tag-s75 $cells --op biased --mask-shape rows/64
  entries="import softmax_bench.kernels.cluster as c; s = c.SHARED_BIASED; s[2].pop(128256, None); \
s[2][50257] = (2, 8, 1, 128); s[2][151936] = (16, 8, 1, 64); s[4][262144] = (16, 4, 1, 168)"
  left 60 && SWEEP_SET=$entries \
    bar_sweep shared-scan-$tag-s75 $cells --op biased --mask-shape rows/64
fi
if [[ ${1:-} == h200b ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  left 130 && bar_sweep bar-key-padded-log-$tag-s75 --preset default --op key-padded --log
  left 130 && bar_sweep bar-biased-rows64-log-$tag-s75 --preset default --op biased --log --mask-shape rows/64
  for log in "" --log; do
    left 40 && bar_sweep relaunched-biased${log:+-log}-$tag-s75 --shape 512x262144 --dtype bf16 --op biased $log
    left 40 && bar_sweep relaunched-causal${log:+-log}-$tag-s75 --shape 512x262144 --dtype fp32 --op causal $log
  done
fi
if [[ ${1:-} == mask-from-32 ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  for from in 64 32; do
    left 50 && SWEEP_SET="import softmax_bench.kernels.cluster as c; c.PHASED_FROM_ROWS = $from" \
      bar_sweep from32-$from-$tag-s75 --shape 8192x50257 --shape 2048x50257 --dtype bf16 --dtype fp32 \
      --op scaled-masked --mask-shape rows/32
  done
  left 40 && bar_sweep plain-50257-$tag-s75 --shape 8192x50257 --dtype bf16 --dtype fp32
fi
if [[ ${1:-} == shared-bias-rows ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_shared_row.py > $OUT/tests-sbr.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-sbr.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-sbr.txt | head
  on="import torch, softmax_bench.kernels.shared_row as s; s.SHARED_BIAS_ROWS = True; \
s.SHARED_ROW_AT[('biased', torch.bfloat16)][131072] = (16, 8, False)"
  for log in "" --log; do
    left 45 && bar_sweep sbr-off${log:+-log}-$tag-s75 --shape 512x262144 --shape 1024x131072 --dtype bf16 \
      --dtype fp32 --op biased --mask-shape rows/64 $log
    left 45 && SWEEP_SET=$on bar_sweep sbr-on${log:+-log}-$tag-s75 --shape 512x262144 --shape 1024x131072 \
      --dtype bf16 --dtype fp32 --op biased --mask-shape rows/64 $log
  done
  for log in "" --log; do
    left 35 && SWEEP_SET="$on; s.bias_held = lambda dtype: False" bar_sweep sbr-read${log:+-log}-$tag-s75 \
      --shape 512x262144 --shape 1024x131072 --dtype bf16 --op biased --mask-shape rows/64 $log
  done
fi
