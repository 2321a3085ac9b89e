#!/usr/bin/env bash
# The fortieth session's device steps: bash evidence/experiments/2026-12-05-session40/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the thirty-eighth session's bundle and .ab).
# halved-warps (issue 26): fused's backward with half the default's warps (a thread holding two 16-byte vectors of
#   y and of dy, not one) against the default, for the plain softmax and its log, at rows of 512–4096 in both
#   dtypes (the log's default is the halved one up to 1024 since LOG_HALVED_UP_TO). The thirty-fourth session's
#   backward-tiles step (run this session) found the log forms' backward 2–4 points faster with half the warps at
#   rows of 512 and 1024. Prediction: the same at 512 and 1024 for the plain softmax; ±1 at 2048 and 4096.
# log-tiles (issue 26): with fused_backward.LOG_HALVED_UP_TO (a log's backward at rows up to 1024: half the warps),
#   the GPU suite's backward part, then the masked log's backward grid beside torch.compile (COMMIT=SHA). Prediction:
#   the part passes; fused's rows of 512 and 1024 (bf16 131072×1024, 262144×512; fp32 the same) 2–4 points above
#   scaled-masked-log-backward-h200-e's and level with or ahead of torch.compile; the other cells ±1. First
#   (issue 29, replay.CALLED_ONCE: a kind's plan made at its second call) test_replay and test_launcher on the GPU,
#   and host-cost's rows. Prediction: both pass; auto at a new width a call 120.6 → ≤ 100 µs (no make_plan, no
#   launcher Launches, no recording), the replayed rows as before.
# called-once (issue 29): host-cost's rows of a new width a call, auto as it is (no plan at a kind's first call) and
#   "a plan each" (replay.CALLED_ONCE holding every key, as before 1d59262), in one process, 5 rounds. Prediction:
#   as it is ≥ 15 µs below "a plan each" (make_plan, the launcher's Launches and the recording).
# causal-log-grid (issue 26): the causal log's backward grid with MASKED_LOG_HALVED_UP_TO (COMMIT=SHA). Prediction:
#   bf16 131072×1024 and 262144×512 ≥ 104 and ahead of torch.compile (backward-tiles: 105.07 and 104.89 against
#   103.76 and 102.60); the other cells ±1 of causal-log-backward-h200-c.
# Every other step as the thirty-ninth session's next.sh has it.
set -u
case $1 in halved-warps|log-tiles|called-once|causal-log-grid) ;; *) exec bash evidence/experiments/2026-12-05-session39/next.sh "$@" ;; esac
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
export PYTHONPATH=$PYTHONPATH:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s40
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  halved-warps)
    shapes=(262144x512 131072x1024 65536x2048 32768x4096)
    for dtype in bf16 fp32; do
      [ $dtype = bf16 ] && tiles=4096:8,4096:16 || tiles=4096:16,4096:32
      for form in plain log; do
        case $form in plain) args=() ;; log) args=(op=softmax log) ;; *) args=(op=scaled-masked log) ;; esac
        timeout 120 python3 scripts/backward-tiles.py $OUT/halved-$form-$dtype.csv $dtype modes=last rounds=5 \
          tiles=$tiles "${args[@]}" "${shapes[@]}" > $OUT/halved-$form-$dtype.txt 2>&1
        echo "$form $dtype rc=$? at $SECONDS s"; grep median $OUT/halved-$form-$dtype.txt
      done
    done ;;
  log-tiles)
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_replay.py tests/test_launcher.py -rfE \
      > $OUT/tests-replay-launcher.txt 2>&1
    echo "replay and launcher rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay-launcher.txt)"
    grep -E "^(FAILED|ERROR)" $OUT/tests-replay-launcher.txt
    timeout 120 python3 scripts/host-cost.py $OUT/host-new-width.csv --op softmax --rounds 5 --row "replayed launch" \
      --row "softmax_bench auto" --row "new width" > $OUT/host-new-width.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-new-width.txt
    GPU_TEST_WORKERS=16 timeout 200 bash scripts/gpu-tests.sh backward -rfE > $OUT/tests-backward.txt 2>&1
    echo "backward part rc=$? at $SECONDS s: $(tail -1 $OUT/tests-backward.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-backward.txt
    bash evidence/experiments/2026-12-04-session33/next.sh grid scaled-masked-log-backward-h200-f --op scaled-masked \
      --log --pass backward
    grep -E "131072|262144" $OUT/scaled-masked-log-backward-h200-f.txt | head -40 ;;
  called-once)
    timeout 150 python3 scripts/host-cost.py $OUT/host-called-once.csv --op softmax --rounds 5 --row "new width" \
      > $OUT/host-called-once.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-called-once.txt ;;
  causal-log-grid)
    bash evidence/experiments/2026-12-04-session33/next.sh grid causal-log-backward-h200-d --op causal --log \
      --pass backward ;;
esac
