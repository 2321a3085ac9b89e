#!/usr/bin/env bash
# The seventy-third session's device step: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session73/next.sh all
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]. In one call (an H200; LEFT_S, ~9 min):
# 1. the GPU tests of the phase copies (landed in this session: cluster.PHASED_SHARED_ROWS, forward and the log's
#    backward) and of the last sessions' changes (the shift, once, the shared rows);
# 2. the A/B at the one cell the phase copies change on the default grid, 8192x50257: key-padded and biased rows/64
#    forward with the switch off (unphased-<op>-<card>-s73), auto beside torch_compile; the bar's runs give it on;
# 3. the bar's sweeps, auto beside torch_compile over the default grid, while time is left: key-padded forward,
#    biased rows/64 forward, the key-padded log backward, key-padded log, biased rows/64 log (bar-<form>-<card>-s73).
# confirm (any card; ~5 min): after `all` on an H100, the GPU tests of the bias's phase copies kept to 16-bit x, MASK_ONCE's
#   fp32 bound and the rule's cluster from 32768 (dispatch.RULE_CLUSTER_FROM); at 4096x32768, every form auto beside
#   fused, cluster and torch_compile (rule-32768-<op>-<card>-s73); biased rows/64 at 8192x50257, bf16 and fp32, forward
#   and log (gated-biased[-log]-<card>-s73).
# suite (any card; SUITE_S, default 420): HALF=1 (default) or 2, that half of tests/test_*.py on the GPU (the first:
#   cluster, bias, fusion, dispatch, explain, the CLI; the second: kernels, log_softmax, rounding, sweeps, torch's
#   samples), -v so that a run cut short still names what it ran.
# biased-scan (any card; LEFT_S): scripts/cluster-configs.py over biased rows/64's wide widths (WIDTHS, default 50257
#   128256 151936 262144; DTYPE bf16 or fp32, default bf16), every configuration compiled first in a process a width,
#   then timed against a copy, the best of each width printed: BIASED's entries were fitted to the full bias on the
#   H200, and rows/64's cluster cells run at 75-88 on the H100.
# small-groups (any card; ~4 min): the phase copies where few rows share a row, measured only at rows/64 so far:
#   their bytes are 2 * VEC / K of the mask's (a quarter of x's at K = 8 for a bf16 x's mask), and a phased call is
#   not replayed (it pays the host path: host_us, call_ms). scaled-masked's mask and a bias laid out rows/K, K = 4, 16,
#   64, at 64x50257 and 8192x50257 in bf16, phased and not (small-<op>-rows<K>-<phased|unphased>-<card>-s73).
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left
sweep() {  # sweep ID PHASED ARGS...: device-step.sh's bar_sweep with cluster.PHASED_SHARED_ROWS = PHASED
  local id=$1 phased=$2; shift 2
  SWEEP_SET="import softmax_bench.kernels.cluster as c; c.PHASED_SHARED_ROWS = $phased" bar_sweep $id "$@"
}
if [[ ${1:-} == all ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 150 python3 -m pytest -q -p no:cacheprovider -n 12 -rfE tests/test_cluster.py tests/test_cluster_backward.py \
    tests/test_fusion.py tests/test_bias.py -k "shift or once or broadcast or shared or keep or phase or bias" \
    > $OUT/tests.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests.txt | head -20
  for op in key-padded biased; do
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 30 && sweep unphased-$op-$tag-s73 False --shape 8192x50257 --dtype bf16 --dtype fp32 --op $op $shape
  done
  for form in key-padded biased-rows64 key-padded-log-backward key-padded-log biased-rows64-log; do
    op=key-padded; [[ $form == biased* ]] && op=biased
    log=; [[ $form == *-log* ]] && log=--log
    pass=; [[ $form == *-backward ]] && pass="--pass backward"
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 100 && sweep bar-$form-$tag-s73 True --preset default --op $op $log $pass $shape
  done
fi
if [[ ${1:-} == confirm ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  timeout 200 python3 -m pytest -q -p no:cacheprovider -n 12 -rfE tests/test_cluster.py tests/test_cluster_backward.py \
    tests/test_fusion.py tests/test_bias.py tests/test_kernels.py tests/test_dispatch.py tests/test_explain.py \
    -k "once or phase or shared or bias or auto or rule or explain" > $OUT/tests-confirm.txt 2>&1
  echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-confirm.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-confirm.txt | head -20
  for form in softmax causal key-padded key-padded-log biased-rows64 biased-rows64-log; do
    op=${form%-log}; op=${op%-rows64}; log=; [[ $form == *-log ]] && log=--log
    shape=; [[ $op == biased ]] && shape="--mask-shape rows/64"
    left 40 && sweep rule-32768-$form-$tag-s73 True --shape 4096x32768 --dtype bf16 --dtype fp32 --op $op $log $shape \
      --variant fused --variant cluster
  done
  for form in biased biased-log; do
    log=; [[ $form == *-log ]] && log=--log
    left 30 && sweep gated-$form-$tag-s73 True --shape 8192x50257 --dtype bf16 --dtype fp32 --op biased $log \
      --mask-shape rows/64
  done
fi
if [[ ${1:-} == suite ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  files=(tests/test_*.py); n=${#files[@]}; half=${HALF:-1}
  if [[ $half == 1 ]]; then files=("${files[@]:0:n/2}"); else files=("${files[@]:n/2}"); fi
  log=$OUT/gpu-suite$half.txt
  timeout ${SUITE_S:-420} python3 -m pytest -v -p no:cacheprovider -n 14 -rfE "${files[@]}" > $log 2>&1
  echo "suite rc=$? at $SECONDS s: $(tail -1 $log)"
  grep -E " (FAILED|ERROR) " $log | sed 's/.*\(FAILED\|ERROR\) //' | sort -u | cut -c1-220
  grep -cE " PASSED " $log
fi
if [[ ${1:-} == biased-scan ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  widths=(${WIDTHS:-50257 128256 151936 262144}); dtype=${DTYPE:-bf16}
  for N in "${widths[@]}"; do
    MASK_SHAPE=rows/64 COMPILE_ONLY=1 timeout 240 python3 scripts/cluster-configs.py /dev/null $dtype biased $N \
      > $OUT/compile-$dtype-$N.txt 2>&1 &
  done
  wait; echo "compiled at $SECONDS s"
  MASK_SHAPE=rows/64 timeout $(( ${LEFT_S:-600} - SECONDS - 10 )) python3 scripts/cluster-configs.py \
    $OUT/biased-rows64-$dtype.csv $dtype biased "${widths[@]}" > $OUT/biased-scan-$dtype.txt 2>&1
  echo "scan rc=$? at $SECONDS s"; grep -E "BEST|WRONG|rror" $OUT/biased-scan-$dtype.txt | tail -12
fi
if [[ ${1:-} == small-groups ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  for K in 4 16 64; do
    for op in scaled-masked biased; do
      for phased in True False; do
        form=$([[ $phased == True ]] && echo phased || echo unphased)
        left 25 && sweep small-$op-rows$K-$form-$tag-s73 $phased --shape 64x50257 --shape 8192x50257 --dtype bf16 \
          --op $op --mask-shape rows/$K
      done
    done
  done
fi
