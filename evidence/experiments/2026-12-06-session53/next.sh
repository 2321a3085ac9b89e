#!/usr/bin/env bash
# The fifty-third session's device steps: bash evidence/experiments/2026-12-06-session53/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA (literal: the device copy's .git is stale).
# Every other step passes to the fifty-second session's next.sh and on down.
# first: by card. On an H200 bar-cells (below); on any other card session 52's heaviest-first at the cells it did not
#   run (CELLS="512 1024 4096 16384"). Then, on either, floor2.
# floor2 (issue 26's premise): causal-floor2.py, kernels that move causal bf16 4096×4000's modelled bytes and compute
#   nothing (rows in order or last first, by elements or 16-byte vectors, persistent; the reads and the writes
#   apart; a Triton copy), beside fused, % of the cell's roofline. Prediction (docs/perf-notes.md, fifty-third
#   session): the best floor 88–92 % at bf16 4096×4000.
# bisect (issue 26): causal-bisect.py, the floor grown toward the softmax one piece at a time at causal bf16
#   4096×4000 (the scale and select, the max, a second reduction, the exponentials), the softmax in 1 and 2 warps,
#   and fused, ROUNDS=3 rounds in turn. Prediction in docs/perf-notes.md (fifty-third session, the outcomes' end).
# sweeps-part: scripts/gpu-tests.sh sweeps in its default 8 workers (16, as session 33's `parts` runs them, ran out of
#   the H100's memory in 7 tests this session).
# bar-cells (issue 26; COMMIT=SHA): every cell bar-status.py has under the bar (or a peer ahead or level), auto beside
#   torch.compile, one sweep a form and dtype (runs bar-<form>-<dtype>-<card>-s53, `tar` in runs-bar-cells.tgz);
#   the grids of those forms were run before the changes since (STAGED_AT, EXP_FTZ, the scale's fma, BIASED,
#   reads-kept). Prediction in docs/perf-notes.md (fifty-third session).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
if [[ $1 == floor2 ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 170 python3 evidence/experiments/2026-12-06-session53/causal-floor2.py ${CELLS:-} \
    > $OUT/causal-floor2.txt 2>&1; echo "floor2 rc=$? at $SECONDS s"; grep -v Warning $OUT/causal-floor2.txt | tail -70
  exit 0
fi
if [[ $1 == sweeps-part ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 500 bash scripts/gpu-tests.sh sweeps --durations=5 -rfE > $OUT/tests-sweeps.txt 2>&1
  echo "sweeps rc=$? at $SECONDS s: $(tail -1 $OUT/tests-sweeps.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-sweeps.txt
  exit 0
fi
if [[ $1 == bisect ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 200 python3 evidence/experiments/2026-12-06-session53/causal-bisect.py ${CELLS:-} \
    > $OUT/causal-bisect.txt 2>&1; echo "bisect rc=$? at $SECONDS s"; grep -v Warning $OUT/causal-bisect.txt | tail -30
  exit 0
fi
if [[ $1 == bar-cells ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s53
  tag=$(grep -qi h200 <<< "$card" && echo h200 || echo h100)
  while read -r id args; do
    SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 120 python3 -m softmax_bench sweep --out $OUT/runs \
      --run-id bar-$id-$tag-s53 $args --variant auto --variant torch_compile > $OUT/bar-cells.txt 2>&1
    echo "bar-$id rc=$? at $SECONDS s"; grep -E "Error" $OUT/bar-cells.txt | head -3
    python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(" ", r["variant"], r["dtype"], r["M"] + "x" + r["N"], r["status"], "pct_of_roofline", r["pct_of_roofline"][:5],
          "ms", r["ms"][:8], "p20-p80", r["ms_p20"][:8], r["ms_p80"][:8])' $OUT/runs/bar-$id-$tag-s53/rows.csv
  done <<'CELLS'
scaled-backward-fp32 --op scaled --pass backward --dtype fp32 --shape 512x262144
scaled-backward-bf16 --op scaled --pass backward --dtype bf16 --shape 16384x8192 --shape 4096x4000 --shape 32768x4096
scaled-log-backward-fp32 --op scaled --log --pass backward --dtype fp32 --shape 512x262144
scaled-masked-backward-fp32 --op scaled-masked --pass backward --dtype fp32 --shape 512x262144
scaled-masked-log-backward-fp32 --op scaled-masked --log --pass backward --dtype fp32 --shape 512x262144
scaled-masked-log-backward-bf16 --op scaled-masked --log --pass backward --dtype bf16 --shape 16384x8192
biased-bf16 --op biased --dtype bf16 --shape 512x262144
biased-log-bf16 --op biased --log --dtype bf16 --shape 512x262144
biased-log-fp32 --op biased --log --dtype fp32 --shape 16384x8192
biased-log-backward-fp32 --op biased --log --pass backward --dtype fp32 --shape 512x262144
causal-bf16 --op causal --dtype bf16 --shape 2048x151936 --shape 4096x4000
causal-fp32 --op causal --dtype fp32 --shape 512x262144
causal-log-bf16 --op causal --log --dtype bf16 --shape 4096x4000 --shape 16384x8192
causal-log-fp32 --op causal --log --dtype fp32 --shape 512x262144
causal-log-backward-bf16 --op causal --log --pass backward --dtype bf16 --shape 131072x1024 --shape 262144x512
CELLS
  tar czf $OUT/runs-bar-cells.tgz -C $OUT runs && rm -rf $OUT/runs
  exit 0
fi
if [[ $1 == first ]]; then
  if grep -qi h200 <<< "$card"; then
    bash evidence/experiments/2026-12-06-session53/next.sh bar-cells
  else
    CELLS="512 1024 4096 16384" bash evidence/experiments/2026-12-05-session52/next.sh heaviest-first
  fi
  exec bash evidence/experiments/2026-12-06-session53/next.sh floor2
fi
exec bash evidence/experiments/2026-12-05-session52/next.sh "$@"
