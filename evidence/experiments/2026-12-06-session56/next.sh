#!/usr/bin/env bash
# The fifty-sixth session's device steps: bash evidence/experiments/2026-12-06-session56/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-fifth session's next.sh and on down.
# fold (issue 26): the causal fusion tests on the GPU, then ab-fold-scale.py (fused.FOLD_SCALES: a causal row's
#   positive scale in its exponent, one FFMA an element) at CELLS (default 4096x4000 8192 16384), then the causal
#   cells of bar-status swept with it (auto beside torch.compile, runs causal-fold-<fwd|log>-<card>-s56${TAG}).
#   Prediction in docs/perf-notes.md (fifty-sixth session).
# biased-floor (issue 26's premise at the wide biased cells): biased-floor.py, bf16 and fp32 512x262144: torch's
#   and a Triton kernel's y = x + bias (biased softmax's three tensors) and copy, the cluster kernel's biased softmax
#   and its log, as % of the cell's roofline. Prediction in docs/perf-notes.md (fifty-sixth session).
# h200: on an H200 biased-floor, copy-numel.py (the memcpy's pages), session 55's three wide specs of cluster-configs.py (ONE_SPEC=1: the biased one) and one host-bar process; on
#   another card nothing (biased-floor ran on an H100 this session: out-h100/biased-floor-h100.txt).
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
  biased-floor)
    echo "card: $card"; . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 evidence/experiments/2026-12-06-session56/biased-floor.py ${CELLS:-} > $OUT/biased-floor-$tag.txt 2>&1
    echo "biased-floor rc=$? at $SECONDS s"; grep -vE "Warning|^W" $OUT/biased-floor-$tag.txt | tail -20 ;;
  h200)
    grep -qi h200 <<< "$card" || { echo "$card: not an H200, nothing run"; exit 0; }
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    bash evidence/experiments/2026-12-06-session56/next.sh biased-floor
    timeout 60 python3 evidence/experiments/2026-12-06-session56/copy-numel.py 0 1 2048 > $OUT/copy-numel-h200.txt 2>&1
    echo "copy-numel rc=$? at $SECONDS s"; grep -v Warn $OUT/copy-numel-h200.txt
    if [[ ${ONE_SPEC:-} ]]; then bash evidence/experiments/2026-12-05-session42/next.sh configs "bf16 biased 262144"
    else bash evidence/experiments/2026-12-05-session42/next.sh configs "bf16 biased 262144" "bf16 causal 151936" \
      "fp32 causal 262144"; fi
    timeout 100 python3 scripts/host-cost.py $OUT/host-bar-a.csv --op softmax --op scaled-masked --op log-softmax \
      --rounds 5 --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op --row torch_compile \
      > $OUT/host-bar-a.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; python3 scripts/host-bar.py $OUT/host-bar-a.csv ;;
  *) exec bash evidence/experiments/2026-12-06-session55/next.sh "$@" ;;
esac
