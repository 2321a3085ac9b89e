#!/usr/bin/env bash
# The fifty-ninth session's device steps: bash evidence/experiments/2026-12-06-session59/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal where a step sweeps.
# Every other step passes to the fifty-eighth session's next.sh and on down.
# Ran this session on an H100 (no H200 came in eleven tries): session 58's h100 (out-h100/), three host-bar
#   processes (out-h100/host-bar/), session 50's call-trace.py with Inductor's output code (out-h100/call-trace/),
#   session 58's waves (out-h100/waves/: the control for the H200's).
# h200 (issue 26; an H200 only, ~470 s): session 58's waves first (paid once a launch or row by row?), then
#   session 42's cluster-configs at the three wide cells furthest under the bar. Predictions in docs/perf-notes.md
#   (fifty-eighth session, waves; fifty-fifth, the configurations).
# h200-waves (issue 26; an H200 only): waves, then the biased bf16 configurations within LEFT_S seconds.
# persistent (issue 26; any card; only in a tree at bbd56b5, where the loop is: it was reverted after this step ran on
#   the H100): the persistent cluster (cluster.launch's rows_each) on the GPU: its bit-for-bit test, then
#   ab-persistent.py (rows_each 1, 4, 16, 32 at the four wide cells, alternating rounds). docs/perf-notes.md.
# h200-host (issue 29; an H200 only, ~200 s): three host-cost processes of the bar's rows read round by round and
#   pooled (host-bar.py --pool), then
#   the scaled-masked log backward fp32 512x262144 (87.2 in the fifty-fourth session, not measured since).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
s58=evidence/experiments/2026-12-06-session58/next.sh
case $1 in
  h200)
    grep -qi h200 <<< "$card" || exit 0
    bash $s58 waves
    timeout 300 bash evidence/experiments/2026-12-05-session42/next.sh configs "bf16 biased 262144" \
      "fp32 causal 262144" "bf16 causal 151936" ;;
  h200-waves)  # when little device time is left: waves, then the biased configurations in what remains (LEFT_S)
    grep -qi h200 <<< "$card" || exit 0
    bash $s58 waves
    left=$(( ${LEFT_S:-300} - SECONDS - 20 ))
    [ $left -gt 60 ] && timeout $left bash evidence/experiments/2026-12-05-session42/next.sh configs "bf16 biased 262144" ;;
  persistent)  # (issue 26) the persistent cluster's GPU tests, then ab-persistent.py (ROUNDS, default 3)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cluster.py -k persistent -rfE \
      > $OUT/tests-persistent.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-persistent.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-persistent.txt
    timeout ${AB_S:-240} env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session59/ab-persistent.py \
      $OUT/ab-persistent.csv ${ROUNDS:-3} > $OUT/ab-persistent.txt 2>&1
    echo "ab-persistent rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-persistent.txt | tail -12 ;;
  h200-host)
    grep -qi h200 <<< "$card" || exit 0
    for p in a b c; do timeout 90 bash $s58 host-bar h200$p; done
    python3 scripts/host-bar.py --pool $OUT/host-bar-h200?.csv
    . .ab/device-setup.sh > /dev/null
    id=sm-log-backward-fp32-512x262144-h200-s59
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 120 python3 -m softmax_bench sweep --out $OUT/runs \
      --run-id $id --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144 --variant auto \
      --variant torch_compile > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s"; tail -15 $OUT/sweep-$id.txt; tar czf $OUT/runs-s59.tgz -C $OUT runs ;;
  *) exec bash $s58 "$@" ;;
esac
