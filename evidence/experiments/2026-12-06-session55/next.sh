#!/usr/bin/env bash
# The fifty-fifth session's device steps: bash evidence/experiments/2026-12-06-session55/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-fourth session's next.sh and on down.
# Ran this session, on an H100 each time (no H200 came): first (the GPU tests and memo's host-bar), first again after
#   the test-order fix and after at::empty (the GPU tests), two host-bar calls by hand (out-h100*/). Not run: wide-a,
#   wide-b, wide-bar, h200-only (they need an H200).
# wide-a / wide-b (issue 26, the H200's wide cluster rows under the bar): scripts/cluster-configs.py on the H200 at
#   the cells bar-status has under it (session 42's `configs` step: compiled side by side, then timed in turn),
#   after fusion-tests. wide-a: bf16 biased 262144 and its log, bf16 causal 151936, fp32 causal 262144 and its log
#   (session 46's H100 call ran one spec in about a minute); wide-b: the fp32 two alone, if wide-a ran out of time. Every configuration's % of a copy of the op's bytes, in-process. Prediction in docs/perf-notes.md
#   (fifty-fifth session). On a card that is not an H200 (whose configurations were measured already), sweeps-part.
# h200-only: on an H200 alone, configs of bf16 biased 262144 and fp32 causal 262144, then one host-bar process.
# first: the GPU tests (memo's and the causal fusion tests); on an H200 then three wide specs (ONE_SPEC=1: the biased
#   bf16 one alone) and one host-bar process.
# memo (issue 29): replayed.cpp's memo of its last plans found (replay.PlanTable): test_replayed_cxx, test_launcher
#   and test_replay on the GPU, then session 48's host-bar (three processes of host-cost.py's bar rows, each read by
#   host-bar.py). Prediction in docs/perf-notes.md (fifty-fifth session).
# wide-bar (issue 26; COMMIT=SHA; TAG=a name's end): session 53's bar-cells sweep at the wide cluster rows alone
#   (biased bf16 512x262144 and its log, causal bf16 2048x151936, causal fp32 512x262144 and its log), auto beside
#   torch.compile, runs bar-<form>-<dtype>-<card>-s55${TAG} (`tar` in runs-wide-bar.tgz).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
configs() { bash evidence/experiments/2026-12-05-session42/next.sh configs "$@"; }
case $1 in
  wide-a)
    bash evidence/experiments/2026-12-06-session54/next.sh fusion-tests
    if grep -qi h200 <<< "$card"; then
      configs "bf16 biased 262144" "bf16 biased log 262144" "bf16 causal 151936" "fp32 causal 262144" \
        "fp32 causal log 262144"
    else
      exec bash evidence/experiments/2026-12-06-session54/next.sh sweeps-part
    fi ;;
  wide-b)
    echo "card: $card"; grep -qi h200 <<< "$card" || exit 0
    configs "fp32 causal 262144" "fp32 causal log 262144" ;;
  memo)
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_replayed_cxx.py tests/test_launcher.py \
      tests/test_replay.py -n 8 -rfE > $OUT/tests-memo.txt 2>&1
    echo "memo tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-memo.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-memo.txt
    exec bash evidence/experiments/2026-12-05-session48/next.sh host-bar ;;
  wide-bar)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s55
    tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
    while read -r id args; do
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 120 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id bar-$id-$tag-s55${TAG:-} $args --variant auto --variant torch_compile > $OUT/wide-bar.txt 2>&1
      echo "bar-$id rc=$? at $SECONDS s"; grep -E "Error" $OUT/wide-bar.txt | head -3
      python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(" ", r["variant"], r["dtype"], r["M"] + "x" + r["N"], r["status"], "pct_of_roofline", r["pct_of_roofline"][:5],
          "ms", r["ms"][:8], "p20-p80", r["ms_p20"][:8], r["ms_p80"][:8])' $OUT/runs/bar-$id-$tag-s55${TAG:-}/rows.csv
    done <<'CELLS'
biased-bf16 --op biased --dtype bf16 --shape 512x262144
biased-log-bf16 --op biased --log --dtype bf16 --shape 512x262144
causal-bf16 --op causal --dtype bf16 --shape 2048x151936
causal-fp32 --op causal --dtype fp32 --shape 512x262144
causal-log-fp32 --op causal --log --dtype fp32 --shape 512x262144
CELLS
    tar czf $OUT/runs-wide-bar.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  first)  # the GPU tests; then on an H200 three of wide-a's specs and one process of host-bar
    . .ab/device-setup.sh > /dev/null && pip install -q --no-deps .ab/whl/*.whl
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_replayed_cxx.py tests/test_launcher.py \
      tests/test_replay.py "tests/test_fusion.py" -k "not test_fusion or causal" -n 8 -rfE > $OUT/tests-first.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-first.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-first.txt
    if grep -qi h200 <<< "$card"; then
      if [[ ${ONE_SPEC:-} ]]; then configs "bf16 biased 262144"
      else configs "bf16 biased 262144" "bf16 causal 151936" "fp32 causal 262144"; fi
      timeout 150 python3 scripts/host-cost.py $OUT/host-bar-a.csv --op softmax --op scaled-masked --op log-softmax \
        --rounds 5 --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op --row torch_compile \
        > $OUT/host-bar-a.txt 2>&1
      echo "host-cost rc=$? at $SECONDS s"; python3 scripts/host-bar.py $OUT/host-bar-a.csv
    fi ;;
  h200-only)  # on an H200 alone (else nothing): two wide specs, one host-bar process
    grep -qi h200 <<< "$card" || { echo "not an H200: nothing run"; exit 0; }
    . .ab/device-setup.sh > /dev/null
    if [[ ${ONE_SPEC:-} ]]; then configs "bf16 biased 262144"; else configs "bf16 biased 262144" "fp32 causal 262144"; fi
    timeout 100 python3 scripts/host-cost.py $OUT/host-bar-a.csv --op softmax --op scaled-masked --op log-softmax \
      --rounds 5 --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op --row torch_compile \
      > $OUT/host-bar-a.txt 2>&1
    echo "host-cost rc=$? at $SECONDS s"; python3 scripts/host-bar.py $OUT/host-bar-a.csv ;;
  *) exec bash evidence/experiments/2026-12-06-session54/next.sh "$@" ;;
esac
