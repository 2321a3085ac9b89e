#!/usr/bin/env bash
# The sixty-first session's device steps: bash evidence/experiments/2026-12-06-session61/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal where a step sweeps.
# Every other step passes to the sixtieth session's next.sh and on down.
# first: on an H200 session 59's h200; else session 60's verify.
# check (any card, ~5 min): the compiled calls' tests, then three host-bar processes pooled.
# prologue (any card, ~3 min): prologue.py, softmax(x + b) compiled: ours after inductor's add, or as torch ops.
# both (any card, ~6 min): the compiled calls' tests, prologue, one host-bar process.
# h200-rest (an H200, ~6 min): what ran after both this session (chain, host-bar, a sweep, configs, waves).
# chain (issue 29 item 3; any card, ~5 min): chain.py: two of our calls chained in a compiled step, our kernels
#   against the chain as torch ops inductor fuses (host µs at 64x4000 bf16; GPU ms at WIDTHS). docs/perf-notes.md,
#   sixty-first session.
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
case $1 in
  first)  # on an H200 the fifty-ninth session's h200 (waves and the wide cells' configurations, ~470 s); on another
    # card the sixtieth session's verify (the compiled calls' tests, fold-code, fold-scales; ~4 min)
    if grep -qi h200 <<< "$card"; then exec bash evidence/experiments/2026-12-06-session59/next.sh h200; fi
    exec bash evidence/experiments/2026-12-06-session60/next.sh verify ;;
  chain)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout ${CHAIN_S:-400} env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session61/chain.py \
      ${ROUNDS:-9} > $OUT/chain.txt 2>&1
    echo "chain rc=$? at $SECONDS s"; grep -vE "^W|Warning|warn" $OUT/chain.txt | tail -60 ;;
  check)  # (any card, ~5 min) the compiled calls' tests at this tree, then three host-bar processes pooled (issue 29
    # item 1: compiled_op against torch_compile, with the mask pointer None since 84cccc8)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_prologue_folding.py tests/test_compile.py \
      tests/test_replay.py > $OUT/tests-check.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-check.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-check.txt
    tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
    for p in a b c; do timeout 100 bash evidence/experiments/2026-12-06-session58/next.sh host-bar $tag$p; done
    python3 scripts/host-bar.py --pool $OUT/host-bar-$tag?.csv ;;
  prologue)  # (any card, ~3 min) prologue.py: softmax(x + b) compiled, our kernel after inductor's add against torch ops
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout ${PROLOGUE_S:-300} env PYTHONPATH=$PYTHONPATH:scripts python3 \
      evidence/experiments/2026-12-06-session61/prologue.py ${ROUNDS:-5} > $OUT/prologue.txt 2>&1
    echo "prologue rc=$? at $SECONDS s"; grep -vE "^W|Warning|warn|nline softmax|split the reduction|important use|^softmax\.$|^$" \
      $OUT/prologue.txt | tail -60 ;;
  both)  # (any card, ~6 min) the compiled calls' tests, prologue, then one host-bar process (HOST_BARS, default a)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_prologue_folding.py tests/test_compile.py \
      tests/test_replay.py > $OUT/tests-check.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-check.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-check.txt
    bash $0 prologue
    tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
    for p in ${HOST_BARS:-a}; do timeout 100 bash evidence/experiments/2026-12-06-session58/next.sh host-bar $tag$p; done
    python3 scripts/host-bar.py --pool $OUT/host-bar-$tag?.csv ;;
  h200-rest)  # what ran on the H200 after `both` (COMMIT=SHA), each a call of its own there: chain at three widths,
    # two more host-bar processes pooled with both's, the scaled-masked log backward fp32 512x262144; then session
    # 42's configs of the three wide cells and session 58's waves
    WIDTHS="1024 4096 16384" CHAIN_S=110 timeout 120 bash $0 chain
    for p in b c; do timeout 48 bash evidence/experiments/2026-12-06-session58/next.sh host-bar h200$p; done
    python3 scripts/host-bar.py --pool $OUT/host-bar-h200?.csv
    . .ab/device-setup.sh > /dev/null
    id=sm-log-backward-fp32-512x262144-h200-s61
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 75 python3 -m softmax_bench sweep --out $OUT/runs --run-id $id \
      --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144 --variant auto --variant torch_compile \
      > $OUT/sweep-$id.txt 2>&1
    tar czf $OUT/runs-s61.tgz -C $OUT runs
    timeout 160 bash evidence/experiments/2026-12-05-session42/next.sh configs "bf16 biased 262144"
    timeout 110 bash evidence/experiments/2026-12-06-session58/next.sh waves
    timeout 85 bash evidence/experiments/2026-12-05-session42/next.sh configs "fp32 causal 262144" "bf16 causal 151936" ;;
  *) exec bash evidence/experiments/2026-12-06-session60/next.sh "$@" ;;
esac
