#!/usr/bin/env bash
# The fifty-sixth session's device steps: bash evidence/experiments/2026-12-06-session56/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-fifth session's next.sh and on down.
# fold (issue 26): the causal fusion tests on the GPU, then ab-fold-scale.py (fused.FOLD_SCALES: a causal row's
#   positive scale in its exponent, one FFMA an element) at CELLS (default 4096x4000 8192 16384), then the causal
#   cells of bar-status swept with it (auto beside torch.compile, runs causal-fold-<fwd|log>-<card>-s56${TAG}).
#   Prediction in docs/perf-notes.md (fifty-sixth session).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
case $1 in
  fold)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py -k "causal and not in_flight" -n 8 -rfE \
      > $OUT/tests-fold.txt 2>&1
    echo "fusion tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-fold.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-fold.txt
    timeout 240 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session56/ab-fold-scale.py \
      $OUT/ab-fold-scale.csv ${CELLS:-} > $OUT/ab-fold-scale.txt 2>&1
    echo "ab rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-fold-scale.txt | tail -60
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s56
    for log in "" --log; do
      id=causal-fold-$([[ $log ]] && echo log || echo fwd)-$tag-s56${TAG:-}
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op causal $log --dtype bf16 --dtype fp32 --shape 4096x4000 --shape 16384x8192 \
        --variant auto --variant torch_compile > $OUT/sweep-fold.txt 2>&1
      echo "$id rc=$? at $SECONDS s"; grep -E "Error" $OUT/sweep-fold.txt | head -3
      python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(" ", r["variant"], r["dtype"], r["M"] + "x" + r["N"], r["status"], "pct_of_roofline", r["pct_of_roofline"][:5],
          "ms", r["ms"][:8], "p20-p80", r["ms_p20"][:8], r["ms_p80"][:8])' $OUT/runs/$id/rows.csv
    done ;;
  *) exec bash evidence/experiments/2026-12-06-session55/next.sh "$@" ;;
esac
