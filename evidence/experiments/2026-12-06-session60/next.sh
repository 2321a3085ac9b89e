#!/usr/bin/env bash
# The sixtieth session's device steps: bash evidence/experiments/2026-12-06-session60/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal where a step sweeps.
# Every other step passes to the fifty-ninth session's next.sh and on down.
# first: on an H200 session 59's h200 (waves, then the wide cells' cluster configurations, ~470 s); on another card
#   the suite's second half of files (HALF=2, SUITE_S, default 450 s) at this tree.
# fold (issues 29 and 26; any card, ~4 min): the GPU's tests of compiled calls (prologue folding, compile, replay),
#   then fold-scales.py (ROUNDS, default 9): the compiled step with the fold on, off, by hand and written as torch's
#   (masked_fill and the multiplies), and a compiled softmax(x * 0.125)'s GPU time folded, not folded and
#   torch.compile's. docs/perf-notes.md, sixtieth session. (Ran at c820de2, when the module was scale_folding and
#   its test file test_scale_folding.py; fold-scales.py's first version reset dynamo between models: see last.)
# fold-code: what a compiled softmax(t * 0.125) launches, the fold on and off.
# last: fold-code and fold-scales.py with inductor's caches off; on an H200 also the scaled-masked log backward.
# verify (any card, ~4 min; the first step of the next session): what this session built after its device time ran
#   out, on the GPU: the compiled calls' tests (prologue folding; test_compile with the mask pointer's memory test;
#   replay), then `last` (fold-code with the masked_fill and t + 1 models, fold-scales.py with the row written as
#   torch's). Predictions: docs/perf-notes.md, sixtieth session.
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
s59=evidence/experiments/2026-12-06-session59/next.sh
case $1 in
  first)
    if grep -qi h200 <<< "$card"; then exec bash $s59 h200; fi
    HALF=${HALF:-2} SUITE_S=${SUITE_S:-450} bash evidence/experiments/2026-12-06-session57/next.sh gpu-suite ;;
  fold)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 240 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_prologue_folding.py tests/test_compile.py \
      tests/test_replay.py > $OUT/tests-fold.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-fold.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-fold.txt
    timeout 240 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session60/fold-scales.py \
      ${ROUNDS:-9} > $OUT/fold-scales.txt 2>&1
    echo "fold-scales rc=$? at $SECONDS s"; grep -vE "^W|Warning|warn" $OUT/fold-scales.txt | tail -30 ;;
  fold-code)  # what a compiled softmax(t * 0.125) launches, the fold on and off (fold-code.py)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 100 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session60/fold-code.py \
      > $OUT/fold-code.txt 2>&1
    echo "fold-code rc=$? at $SECONDS s"; grep -vE "^W|Warning|warn" $OUT/fold-code.txt | tail -40 ;;
  last)  # fold-code and fold-scales.py with inductor's caches off (ROUNDS, default 9); then, on an H200 only, the
    # scaled-masked log backward fp32 512x262144 (COMMIT=SHA)
    export TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0  # the fold off compiles anew, not from the
    # folded graph's cache entry (the first fold run's "fold off" rows matched the folded ones)
    bash $0 fold-code
    . .ab/device-setup.sh > /dev/null
    timeout 120 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-06-session60/fold-scales.py \
      ${ROUNDS:-9} > $OUT/fold-scales-nocache.txt 2>&1
    echo "fold-scales rc=$? at $SECONDS s"; grep -vE "^W|Warning|warn" $OUT/fold-scales-nocache.txt | tail -30
    grep -qi h200 <<< "$card" || exit 0
    . .ab/device-setup.sh > /dev/null
    id=sm-log-backward-fp32-512x262144-h200-s60
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 150 python3 -m softmax_bench sweep --out $OUT/runs \
      --run-id $id --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144 --variant auto \
      --variant torch_compile > $OUT/sweep-$id.txt 2>&1
    echo "$id rc=$? at $SECONDS s"; tail -15 $OUT/sweep-$id.txt; tar czf $OUT/runs-s60.tgz -C $OUT runs ;;
  verify)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 -rfE tests/test_prologue_folding.py \
      tests/test_compile.py tests/test_replay.py > $OUT/tests-verify.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-verify.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-verify.txt
    exec bash $0 last ;;
  *) exec bash $s59 "$@" ;;
esac
