#!/usr/bin/env bash
# The fifty-eighth session's device steps: bash evidence/experiments/2026-12-06-session58/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the bundle now keeps cuobjdump: 180 KB); COMMIT=SHA literal.
# Every other step passes to the fifty-seventh session's next.sh and on down.
# Ran this session: first on an H100 (the suite's second half, then half 1's failures again: all passed), session
#   57's h200-roofline on an H200, then by hand on the H200 (out-h200/commands.txt).
# first: on an H200 the bar cells (session 57's roofline); on another card the suite's second half of files with
#   names, then again the first half's failures of this session's first call (cuobjdump and two OOMs).
# next (COMMIT=SHA): on an H200, h200; on another card, h100.
# h200 (issue 26): session 55's wide-a configurations (scripts/cluster-configs.py at the five wide cluster specs
#   under the bar: is there a configuration that meets it on the H200?), then waves. Predictions in
#   docs/perf-notes.md.
# waves (issue 26; H200): waves.py, the wide cluster rows and a copy of their bytes at M = 16 … 2048: paid once a
#   launch or row by row? Prediction in docs/perf-notes.md (fifty-eighth session).
# h200-host (issue 29): three host-cost processes of the bar's rows, 15 rounds, read round by round by host-bar.py.
# h100: the biased sweep at the cells whose warps changed (4ece3d3: 2048–8192 wide, forward and log, runs
#   biased[-log]-warps-h100-s58${TAG}), then the suite's first half again under 12 workers (the OOM fix, b1fe752).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
here=evidence/experiments/2026-12-06-session58
case $1 in
  first)
    if grep -qi h200 <<< "$card"; then exec bash evidence/experiments/2026-12-06-session57/next.sh roofline; fi
    HALF=2 SUITE_S=${SUITE_S:-420} bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite
    . .ab/device-setup.sh > /dev/null
    timeout 120 python3 -m pytest -v -p no:cacheprovider -n 8 -rfE $(grep -v '^#' $here/half1-failed.txt) \
      > $OUT/half1-again.txt 2>&1
    echo "half 1's failures again rc=$? at $SECONDS s: $(tail -1 $OUT/half1-again.txt)"
    grep -E " (FAILED|ERROR) " $OUT/half1-again.txt | sed 's/.*\(FAILED\|ERROR\) //' | sort -u | cut -c1-220 ;;
  next)
    if grep -qi h200 <<< "$card"; then exec bash $0 h200; else exec bash $0 h100; fi ;;
  h200)
    echo "card: $card"; grep -qi h200 <<< "$card" || exit 0
    timeout 380 bash evidence/experiments/2026-12-06-session55/next.sh wide-a
    exec bash $0 waves ;;
  waves)
    . .ab/device-setup.sh > /dev/null
    timeout 160 env PYTHONPATH=$PYTHONPATH:scripts python3 $here/waves.py $OUT/waves.csv > $OUT/waves.txt 2>&1
    echo "waves rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/waves.txt | tail -40 ;;
  h200-host)
    echo "card: $card"; grep -qi h200 <<< "$card" || exit 0
    bash $0 host-bar a; bash $0 host-bar b; exec bash $0 host-bar c ;;
  host-bar)  # one host-cost.py process of issue 29's bar rows (15 rounds), read round by round; $2 names it
    . .ab/device-setup.sh > /dev/null
    timeout 150 python3 scripts/host-cost.py $OUT/host-bar-$2.csv --op softmax --op scaled-masked --op log-softmax \
      --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op --row torch_compile \
      > $OUT/host-bar-$2.txt 2>&1
    echo "host-cost $2 rc=$? at $SECONDS s"; python3 scripts/host-bar.py $OUT/host-bar-$2.csv ;;
  h100)
    echo "card: $card"
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s58
    for spec in "biased" "biased --log"; do
      id=$(sed 's/ --/-/' <<< "$spec")-warps-h100-s58${TAG:-}
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 140 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op $spec --dtype bf16 --dtype fp32 --shape 4096x4000 --shape 16384x8192 --shape 32768x4096 \
        --shape 65536x2048 --variant auto --variant torch_compile > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$? at $SECONDS s"
      python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(" ", r["variant"], r["dtype"], r["M"] + "x" + r["N"], r["status"], "pct_of_roofline", r["pct_of_roofline"][:5],
          "ms", r["ms"][:8], r["ms_p20"][:8], r["ms_p80"][:8], r["config"])' $OUT/runs/$id/rows.csv
    done
    tar czf $OUT/runs-warps-h100.tgz -C $OUT runs && rm -rf $OUT/runs
    HALF=1 SUITE_S=$((560 - SECONDS)) bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite ;;
  *) exec bash evidence/experiments/2026-12-06-session57/next.sh "$@" ;;
esac
