#!/usr/bin/env bash
# The sixty-second session's device steps: bash evidence/experiments/2026-12-06-session62/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal (the tree's commit, recorded in the runs).
# floor (any card, ~2 min): session 56's biased-floor.py on this card (x + bias, three tensors, against the copy the
#   roofline is priced at; the H200's half never ran before).
# ab (any card, ~5 min): lean-causal.patch A/B/C, ROUNDS (default 2) rounds of old, new, new with evict_last at
#   262144: fp32 causal 512x262144 and 2048x151936, auto, forward; then the log of each once. The tree holds the patch.
#   The patch applies at e6c2e05 (the tree then); compare32.patch (the first form) at 7b5fa49: out-h100/sweep-cmp32-*.
# final (any card, ~5 min): the committed tree's causal GPU tests (now with "lean") and its fp32 causal cells beside
#   torch_compile.
# h200-min (an H200 only, ~3 min): floor, the lean causal GPU tests, then fp32 causal 512x262144 beside torch_compile, softmax and log.
# diagonal (any card, ~4 min): diagonal-store.patch A/B at causal bf16 2048x151936, then its causal GPU tests.
# Every other step passes to the sixty-first session's next.sh.
set -u
here=evidence/experiments/2026-12-06-session62
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
echo "card: $card"
sweep() {  # sweep RUN_ID ARGS...: one sweep of fp32 causal 512x262144 and 2048x151936, auto; EVICT=1: fp32 causal
  # 262144 with evict_last loads (PLAIN_LOADS' entry dropped in the process)
  local id=$1; shift
  SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 150 python3 -c "
import sys, torch
from softmax_bench.kernels import cluster
if '${EVICT:-}': cluster.PLAIN_LOADS[('causal', torch.float32)].discard(262144)
from softmax_bench.cli import app
sys.argv[0] = 'softmax-bench'
app()" sweep --out $OUT/runs --run-id $id \
    --op causal --dtype fp32 --shape 512x262144 --shape 2048x151936 --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
  echo "$id rc=$? at $SECONDS s: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.N}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
}
case $1 in
  floor)
    bash evidence/experiments/2026-12-06-session56/next.sh biased-floor ;;
  ab)  # lean-causal.patch (the tree holds it): ROUNDS rounds of old (the patch reversed), new, new with evict_last at
    # 262144; then the log of each once
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    for r in $(seq ${ROUNDS:-2}); do
      patch -s -R -p1 < $here/lean-causal.patch && sweep lean-old-$tag-$r && patch -s -p1 < $here/lean-causal.patch
      sweep lean-new-$tag-$r
      EVICT=1 sweep lean-evict-$tag-$r
    done
    patch -s -R -p1 < $here/lean-causal.patch && sweep lean-old-log-$tag --log && patch -s -p1 < $here/lean-causal.patch
    sweep lean-new-log-$tag --log
    EVICT=1 sweep lean-evict-log-$tag --log
    tar czf $OUT/runs-s62.tgz -C $OUT runs ;;
  all)  # floor on an H200 only (the H100's ran: out-h100/biased-floor-h100.txt), then ab
    if [[ $tag == h200 ]]; then bash $0 floor; fi
    bash $0 ab ;;
  final)  # (any card, ~5 min) the tree as committed (LEAN_CAUSAL_AT, evict_last at fp32 causal 262144): the causal
    # GPU tests, then fp32 causal 512x262144 and 2048x151936 with torch_compile, softmax and log; floor on an H200
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE -k "causal or lean" tests/test_cluster.py \
      tests/test_kernels.py tests/test_fusion.py tests/test_log_softmax.py > $OUT/tests-final.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-final.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-final.txt
    sweep lean-causal-fp32-$tag-s62 --variant torch_compile
    sweep lean-causal-log-fp32-$tag-s62 --log --variant torch_compile
    tar czf $OUT/runs-final.tgz -C $OUT runs
    if [[ $tag == h200 ]]; then bash $0 floor; fi ;;
  h200-min)  # (an H200 only, ~2 min) the biased floor, then fp32 causal 512x262144 beside torch_compile, softmax and log
    [[ $tag == h200 ]] || { echo "not an H200: nothing run"; exit 3; }
    bash $0 floor
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE -k "causal_rows_by_vectors_match or scale_mask_causal" \
      tests/test_cluster.py > $OUT/tests-lean.txt 2>&1; echo "tests rc=$?: $(tail -1 $OUT/tests-lean.txt)"
    for log in "" --log; do
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 60 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id lean-causal${log:+-log}-fp32-512x262144-h200-s62 --op causal $log --dtype fp32 --shape 512x262144 \
        --variant auto --variant torch_compile 2>&1 | grep -E "auto|torch_compile" | tail -2
    done
    tar czf $OUT/runs-h200.tgz -C $OUT runs ;;
  diagonal)  # (any card, ~4 min; written, not yet run) diagonal-store.patch A/B: causal bf16 2048x151936, auto, ROUNDS
    # (default 2) rounds of HEAD then the patch, softmax; then the log once each. The patch applies at 8bc939f.
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    one() {  # one RUN_ID ARGS...
      local id=$1; shift
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 100 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
        --op causal --dtype bf16 --shape 2048x151936 --variant auto "$@" > $OUT/sweep-$id.txt 2>&1
      echo "$id rc=$?: $(python3 -c "import pandas as pd; d = pd.read_csv('$OUT/runs/$id/rows.csv'); \
print(' '.join(f'{r.N}:{r.pct_of_roofline:.1f}' for r in d.itertuples()))" 2>&1 | tail -1)"
    }
    for r in $(seq ${ROUNDS:-2}); do
      one diag-old-$tag-$r
      patch -s -p1 < $here/diagonal-store.patch && one diag-new-$tag-$r && patch -s -R -p1 < $here/diagonal-store.patch
    done
    one diag-old-log-$tag --log
    patch -s -p1 < $here/diagonal-store.patch && one diag-new-log-$tag --log && patch -s -R -p1 < $here/diagonal-store.patch
    patch -s -p1 < $here/diagonal-store.patch && timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE \
      -k "causal" tests/test_cluster.py > $OUT/tests-diagonal.txt 2>&1; echo "tests rc=$?: $(tail -1 $OUT/tests-diagonal.txt)"
    patch -s -R -p1 < $here/diagonal-store.patch
    tar czf $OUT/runs-diagonal.tgz -C $OUT runs ;;
  *) exec bash evidence/experiments/2026-12-06-session61/next.sh "$@" ;;
esac
