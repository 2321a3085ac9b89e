#!/usr/bin/env bash
# The thirty-eighth session's device steps: bash evidence/experiments/2026-12-05-session38/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the bundle slimmer than the thirty-fifth session's: the
# project's tree grew past what 64 MiB holds beside it; see perf-notes, thirty-eighth session).
# verify: the cluster backward's GPU tests with STAGED_AT and MASK_EARLY on where they measured ahead (ab-staged.py,
#   this session), the launcher's bit-for-bit test (a cluster of 16 left to Triton's launch) and test_replay's
#   recorded-kind tests on the GPU's tensors, with the launcher on.
# unmeasured (issue 26): ab-staged.py at the cells the new switches change that ab-staged did not measure (causal
#   logs and bf16 softmax at the staged widths; the masked log's MASK_EARLY at the grid's narrower widths).
#   Prediction: staged / early within ±1 of as it was or above it at each.
# host (issue 29): host-cost.py with the launcher off and on, the rows that tell (torch's, auto's, the replayed
#   launch, a new width a call, with a gradient), 5 rounds; then eager-step-host.py --through-op.
# profile (issue 29; written after this session's device time was spent, not yet run): host-profile.py, the eager
#   step with autograd's device thread and without, and cProfile of the step and of a call of a new width.
# Every other step as the thirty-seventh session's next.sh has it (grid through the thirty-third's).
set -u
case $1 in verify|unmeasured|host|profile) ;; grid|parts) exec bash evidence/experiments/2026-12-04-session33/next.sh "$@" ;;
  *) exec bash evidence/experiments/2026-12-05-session37/next.sh "$@" ;; esac
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s38
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  verify)
    GPU_TEST_WORKERS=16 timeout 200 bash scripts/gpu-tests.sh cluster -k backward -rfE > $OUT/tests-cluster-backward.txt 2>&1
    echo "cluster backward rc=$? at $SECONDS s: $(tail -1 $OUT/tests-cluster-backward.txt)"
    SOFTMAX_BENCH_OWN_LAUNCHER=1 timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_launcher.py \
      tests/test_replay.py -rfE > $OUT/tests-launcher-replay.txt 2>&1
    echo "launcher and replay (own launcher) rc=$? at $SECONDS s: $(tail -1 $OUT/tests-launcher-replay.txt)"
    grep -hE "^(FAILED|ERROR)" $OUT/tests-cluster-backward.txt $OUT/tests-launcher-replay.txt ;;
  unmeasured)
    timeout 300 python3 evidence/experiments/2026-12-04-session35/ab-staged.py $OUT/unmeasured.csv \
      causal:log:fp32:512x262144 causal:log:bf16:1024x131072 causal:log:bf16:512x262144 \
      scaled-masked:log:bf16:512x262144 scaled:softmax:bf16:1024x131072 causal:softmax:bf16:1024x131072 \
      scaled-masked:log:fp32:8192x16384 scaled-masked:log:bf16:8192x16384 scaled-masked:log:bf16:2048x65536 \
      scaled-masked:log:bf16:4096x128256 > $OUT/unmeasured.txt 2>&1
    echo "unmeasured rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/unmeasured.txt; grep -c "bit for bit" $OUT/unmeasured.txt ;;
  host)
    rows=(--row "replayed launch" --row "softmax_bench auto" --row "new width" --row grad)
    for own in 0 1; do
      SOFTMAX_BENCH_OWN_LAUNCHER=$own timeout 150 python3 scripts/host-cost.py $OUT/host-own$own.csv --op softmax \
        --op scaled-masked --op log-softmax --rounds 5 "${rows[@]}" > $OUT/host-own$own.txt 2>&1
      echo "host-cost own=$own rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-own$own.txt
    done
    timeout 150 python3 evidence/experiments/2026-12-04-session36/eager-step-host.py --through-op \
      > $OUT/eager-step-host.txt 2>&1
    echo "eager-step-host rc=$? at $SECONDS s"; cat $OUT/eager-step-host.txt ;;
  profile)
    timeout 200 python3 evidence/experiments/2026-12-05-session38/host-profile.py > $OUT/host-profile.txt 2>&1
    echo "host-profile rc=$? at $SECONDS s"; head -4 $OUT/host-profile.txt ;;
esac
