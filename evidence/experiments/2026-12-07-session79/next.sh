#!/usr/bin/env bash
# The seventy-ninth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session79/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# first (any card; LEFT_S): `cap`, then on an H200 session 73's `all` (the bar's GPU tests and three of its sweeps),
#   on another card `fp32-phased` and `log-scan`.
# cap (any card; ~2 min): fused.SHIFTED_BIAS_REGISTERS, landed unmeasured in this session: the GPU tests of shared rows
#   found by a shift (tests-cap.txt), then biased rows/64's log at 8192x16384 fp32 (71 registers uncapped: one
#   16-warp program an SM; torch.compile ran ahead of it on the H100) uncapped (uncapped-<card>-s79) and capped at 64
#   (capped-...), twice, auto beside torch_compile.
# fp32-phased (any card; ~3 min): cluster.PHASED_BIAS_ITEMSIZES with 4, a shared bias under fp32 x laid out in phase
#   copies too (it lost to reading in place with torch's copies, seventy-third session; masking.phase_copies_kernel
#   has made the copies cheaper): the GPU test of a shared bias off the grid (tests-fp32-phased.txt), then biased
#   rows/64 fp32 at 8192x50257 and 2048x50257, forward and log, in place (inplace-...) and phased (phased-...), twice.
# log-scan (any card; LEFT_S): scripts/cluster-configs.py over biased rows/64's log at the widths where it ran under
#   the forward on the H100 (WIDTHS, default 151936 262144 50257; DTYPE, default bf16): the log takes BIASED's
#   entries (SHARED_BIASED_LOG holds only bf16 32768), and its caps are dropped for rows held in fp32.
# logs (an H200; ~3 min): the two bar sweeps session 73's `all` does not make, key-padded log and biased rows/64 log.
# relaunched (an H200; ~2 min): the cells of the other forms whose bar runs were made in a launch the code no longer
#   makes (bar-status.py's "launched otherwise now": the row now held in shared memory): biased (a full bias) bf16
#   512x262144 and causal fp32 512x262144, forward and log (relaunched-<form>-<card>-s79).
# h200b (an H200; LEFT_S): `logs`, then `relaunched`.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == first ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 cap
  if [[ $tag == h200 ]]; then
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash evidence/experiments/2026-12-07-session73/next.sh all
  else
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 fp32-phased
    LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 log-scan
  fi
fi
if [[ ${1:-} == cap ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 120 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_fusion.py -k "shift" \
    > $OUT/tests-cap.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-cap.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-cap.txt | head
  cell="--shape 8192x16384 --dtype fp32 --op biased --log --mask-shape rows/64"
  uncapped="import softmax_bench.kernels.fused as f; f.SHIFTED_BIAS_REGISTERS = {}"
  for k in "" 2; do
    left 30 && SWEEP_SET=$uncapped bar_sweep uncapped$k-$tag-s79 $cell
    left 30 && bar_sweep capped$k-$tag-s79 $cell
  done
fi
if [[ ${1:-} == fp32-phased ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 100 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_cluster.py -k "off_the_grid_gives" \
    > $OUT/tests-fp32-phased.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-fp32-phased.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-fp32-phased.txt | head
  cells="--shape 8192x50257 --shape 2048x50257 --dtype fp32 --op biased --mask-shape rows/64"
  phased="import softmax_bench.kernels.cluster as c; c.PHASED_BIAS_ITEMSIZES = (2, 4)"
  for k in "" 2; do
    for form in softmax log; do
      log=; [[ $form == log ]] && log=--log
      left 30 && bar_sweep inplace-$form$k-$tag-s79 $cells $log
      left 30 && SWEEP_SET=$phased bar_sweep phased-$form$k-$tag-s79 $cells $log
    done
  done
fi
if [[ ${1:-} == log-scan ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  widths=(${WIDTHS:-151936 262144 50257}); dtype=${DTYPE:-bf16}
  for N in "${widths[@]}"; do
    MASK_SHAPE=rows/64 COMPILE_ONLY=1 timeout 240 python3 scripts/cluster-configs.py /dev/null $dtype biased log $N \
      > $OUT/compile-log-$dtype-$N.txt 2>&1 &
  done
  wait; echo "compiled at $SECONDS s"
  MASK_SHAPE=rows/64 timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 scripts/cluster-configs.py \
    $OUT/biased-rows64-log-$dtype.csv $dtype biased log "${widths[@]}" > $OUT/log-scan-$dtype.txt 2>&1
  echo "scan rc=$? at $SECONDS s"; grep -E "BEST|WRONG|rror" $OUT/log-scan-$dtype.txt | tail -12
fi
if [[ ${1:-} == logs ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  left 100 && bar_sweep bar-key-padded-log-$tag-s79 --preset default --op key-padded --log
  left 100 && bar_sweep bar-biased-rows64-log-$tag-s79 --preset default --op biased --log --mask-shape rows/64
fi
if [[ ${1:-} == relaunched ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  for form in biased biased-log causal causal-log; do
    op=${form%-log}; log=; [[ $form == *-log ]] && log=--log
    dtype=bf16; [[ $op == causal ]] && dtype=fp32
    left 40 && bar_sweep relaunched-$form-$tag-s79 --shape 512x262144 --dtype $dtype --op $op $log
  done
fi
if [[ ${1:-} == h200b ]]; then
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 logs
  LEFT_S=$(( ${LEFT_S:-600} - SECONDS )) bash $0 relaunched
fi
