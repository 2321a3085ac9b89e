#!/usr/bin/env bash
# The twenty-third session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]):
#   bash evidence/experiments/2026-12-03-session23/next.sh STEP [ARG ...], STEP one of
# causal-bits: fused.CAUSAL_BITS's GPU tests and its A/B (the twenty-second session's next.sh).
# log OP ...: the default grid of each OP with --log (scaled-masked, causal, biased), auto and torch_compile, run id
#   OP-log-h200; "scaled" runs --op scaled (no --log), run id scaled-h200.
# parts PART ...: the suite's GPU parts (scripts/gpu-tests.sh) under Triton 3.8.
# after: CAUSAL_BITS on, the fused forms' log_softmax in their form's configurations (cluster.form_of), a positive
#   scale alone without the select (fused.POSITIVE_SCALES): their GPU tests, then the causal and scaled default
#   grids (run ids causal-h200-l, scaled-h200-b), causal --log's (causal-log-h200-b), and biased --log's and
#   scaled-masked --log's cluster cells (N ≥ 16384: biased-log-h200-b, scaled-masked-log-h200-b).
set -u
step=$1; shift
case $step in
  causal-bits) exec bash evidence/experiments/2026-12-03-session22/next.sh causal-bits ;;
esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  log)
    for op in "$@"; do
      if [ $op = scaled ]; then flags="--op scaled"; id=scaled-h200; else flags="--op $op --log"; id=$op-log-h200; fi
      timeout 280 python3 -m softmax_bench sweep --out $OUT/runs --preset default $flags --variant auto \
        --variant torch_compile --run-id $id > $OUT/$id.txt 2>&1; echo "$id rc=$? at $SECONDS s"; tail -40 $OUT/$id.txt
    done ;;
  after)
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_fusion.py tests/test_cluster.py \
      -k "positive_scale or bits or log" -rfE > $OUT/after-tests.txt 2>&1; echo "tests rc=$? at $SECONDS s"
    tail -3 $OUT/after-tests.txt
    wide="--shape 8192x16384 --shape 4096x32768 --shape 8192x50257 --shape 2048x65536 --shape 4096x128256
      --shape 1024x131072 --shape 2048x151936 --shape 512x262144"
    for run in "causal-h200-l --preset default --op causal" "scaled-h200-b --preset default --op scaled" \
               "causal-log-h200-b --preset default --op causal --log" "biased-log-h200-b $wide --op biased --log" \
               "scaled-masked-log-h200-b $wide --op scaled-masked --log"; do
      set -- $run; id=$1; shift
      timeout 150 python3 -m softmax_bench sweep --out $OUT/runs "$@" --variant auto --variant torch_compile \
        --run-id $id > $OUT/$id.txt 2>&1; echo "$id rc=$? at $SECONDS s"
    done ;;
  parts) GPU_TEST_WORKERS=16 PART_TIMEOUT=${PART_TIMEOUT:-400} bash .ab/gpu2.sh t38 "$@" ;;
esac
