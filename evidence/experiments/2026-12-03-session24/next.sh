#!/usr/bin/env bash
# The twenty-fourth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]):
#   bash evidence/experiments/2026-12-03-session24/next.sh STEP [ARG ...], STEP one of
# tests: the GPU tests of cluster.LOG_AS_FORM, fused.POSITIVE_SCALES and CAUSAL_BITS (test_fusion, test_cluster).
# sweep ID ...: the session-23 "after" grids by run id, auto and torch_compile: causal-h200-l, scaled-h200-b
#   (default grids), causal-log-h200-b (default, --log), biased-log-h200-b and scaled-masked-log-h200-b (N ≥ 16384).
# ab-log [OP]: ab-log-configs.py (causal, the default: fp32 causal log_softmax capped at 128 and 112 registers
#   against config_for's; biased: fp32 biased 128256's log capped at 48 and 56, and with cluster.POSITIVE_SCALES
#   off), to $OUT/ab-log-OP.csv.
# tests2: the positive-scale and shared-mask tests again (the first's GPU tolerance), then shared-mask-log.py.
# configs NAME ARG ...: scripts/cluster-configs.py $OUT/configs-NAME.csv ARG ... (every configuration of a cell).
# fconfigs NAME ARG ...: scripts/fused-configs.py $OUT/fconfigs-NAME.csv ARG ... (e.g. `fconfigs causal bf16 causal
#   4096x4000 16384x8192`: fused's warps and rows a program for causal bf16 4000 (75.1 %) and 8192 (89.0)).
# final: after LOG_REGISTERS and MASKED_LOG_AS_PLAIN_AT: their GPU tests, then the two cells they change (fp32
#   causal 4096×128256 --log, scaled-masked 512×262144 --log; run ids causal-log-h200-c, scaled-masked-log-h200-c).
#   "final cells": the two cells alone (the sweep checks each output against its reference).
# parts PART ...: the suite's GPU parts (scripts/gpu-tests.sh) under Triton 3.8.
set -u
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
wide="--shape 8192x16384 --shape 4096x32768 --shape 8192x50257 --shape 2048x65536 --shape 4096x128256
  --shape 1024x131072 --shape 2048x151936 --shape 512x262144"
case $step in
  tests)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_fusion.py tests/test_cluster.py \
      -k "positive_scale or bits or log" -rfE > $OUT/tests.txt 2>&1; echo "tests rc=$? at $SECONDS s"
    tail -5 $OUT/tests.txt ;;
  sweep)
    for id in "$@"; do
      case $id in
        causal-h200-l) args="--preset default --op causal" ;;
        scaled-h200-b) args="--preset default --op scaled" ;;
        causal-log-h200-b) args="--preset default --op causal --log" ;;
        biased-log-h200-b) args="$wide --op biased --log" ;;
        scaled-masked-log-h200-b) args="$wide --op scaled-masked --log" ;;
        *) echo "unknown run id $id"; continue ;;
      esac
      timeout 170 python3 -m softmax_bench sweep --out $OUT/runs $args --variant auto --variant torch_compile \
        --run-id $id > $OUT/$id.txt 2>&1; echo "$id rc=$? at $SECONDS s"; grep -E "^\s*│|auto|%" $OUT/$id.txt | tail -45
    done ;;
  ab-log) op=${1:-causal}
    timeout 300 python3 evidence/experiments/2026-12-03-session24/ab-log-configs.py $OUT/ab-log-$op.csv $op ;;
  tests2)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_fusion.py tests/test_cluster.py \
      -k "positive_scale or shared_mask" -rfE > $OUT/tests2.txt 2>&1; echo "tests rc=$? at $SECONDS s"
    tail -5 $OUT/tests2.txt
    timeout 200 python3 evidence/experiments/2026-12-03-session24/shared-mask-log.py ;;
  configs) name=$1; shift
    timeout 400 python3 scripts/cluster-configs.py $OUT/configs-$name.csv "$@" 2>&1 | grep -v Warn ;;
  final)
    if [ "${1:-}" != cells ]; then
      timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_fusion.py tests/test_cluster.py \
        -k "positive_scale or log or capped or shared_mask" -rfE > $OUT/final-tests.txt 2>&1
      echo "tests rc=$? at $SECONDS s"; tail -5 $OUT/final-tests.txt
    fi
    for run in "causal-log-h200-c --op causal --shape 4096x128256" "scaled-masked-log-h200-c --op scaled-masked --shape 512x262144"; do
      set -- $run; id=$1; shift
      timeout 100 python3 -m softmax_bench sweep --out $OUT/runs "$@" --dtype fp32 --log --variant auto \
        --variant torch_compile --run-id $id > $OUT/$id.txt 2>&1; echo "$id rc=$? at $SECONDS s"; tail -12 $OUT/$id.txt
    done ;;
  fconfigs) name=$1; shift
    timeout 400 python3 scripts/fused-configs.py $OUT/fconfigs-$name.csv "$@" 2>&1 | grep -v Warn ;;
  parts) GPU_TEST_WORKERS=16 PART_TIMEOUT=${PART_TIMEOUT:-400} bash .ab/gpu2.sh t38 "$@" ;;
esac
