#!/usr/bin/env bash
# The thirty-ninth session's device steps: bash evidence/experiments/2026-12-05-session39/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the thirty-eighth session's bundle and .ab).
# new-width (issue 29; written with no device time, not yet run): with SOFTMAX_BENCH_FAST_LAUNCHES=1 a call of a new
#   kind recorded for replay launches through an earlier launch's compiled kernel where its integers specialize
#   alike (replay.int_class), not through Triton's binding. test_replay on the GPU (its new test: new widths, bit for
#   bit against Triton's launches), then host-cost's rows "a new width a call" and the replayed ones with it off and
#   on. Prediction (perf-notes, thirty-ninth session): auto, a new width a call, from 181.7 µs to ≤ 165 with it off
#   (the session's CPU work: auto_choice, make_plan, make_launch) and ≤ 130 with it on (Triton's binding, 35–60 µs,
#   gone); the replayed rows unchanged.
# host-all (issue 29): new-width, then the thirty-eighth session's profile, then the compiled rows (host-cost.py
#   --row compiled_op --row torch_compile, softmax and scaled-masked), in one command (one machine start), each
#   under its own timeout, ~8 minutes in all.
# Every other step as the thirty-eighth session's next.sh has it (fast-launches, profile, host, grid, parts, ...).
set -u
case $1 in new-width|host-all) ;; *) exec bash evidence/experiments/2026-12-05-session38/next.sh "$@" ;; esac
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s39
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  new-width)
    SOFTMAX_BENCH_FAST_LAUNCHES=1 timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_replay.py \
      -rfE > $OUT/tests-replay-fast.txt 2>&1
    echo "replay (fast launches) rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay-fast.txt)"
    grep -E "^(FAILED|ERROR)" $OUT/tests-replay-fast.txt
    rows=(--row "replayed launch" --row "softmax_bench auto" --row "new width")
    for fast in 0 1; do
      SOFTMAX_BENCH_FAST_LAUNCHES=$fast timeout 120 python3 scripts/host-cost.py $OUT/host-fast$fast.csv --op softmax \
        --rounds 5 "${rows[@]}" > $OUT/host-fast$fast.txt 2>&1
      echo "host-cost fast=$fast rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-fast$fast.txt
    done ;;
  host-all)
    bash evidence/experiments/2026-12-05-session39/next.sh new-width
    timeout 150 python3 evidence/experiments/2026-12-05-session38/host-profile.py > $OUT/host-profile.txt 2>&1
    echo "host-profile rc=$? at $SECONDS s"; head -4 $OUT/host-profile.txt
    timeout 150 python3 scripts/host-cost.py $OUT/host-compiled.csv --op softmax --op scaled-masked --rounds 5 \
      --row compiled_op --row torch_compile > $OUT/host-compiled.txt 2>&1
    echo "host-cost compiled rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-compiled.txt ;;
esac
