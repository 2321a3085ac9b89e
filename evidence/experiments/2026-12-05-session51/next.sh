#!/usr/bin/env bash
# The fifty-first session's device steps: bash evidence/experiments/2026-12-05-session51/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step passes to the
# fiftieth session's next.sh (parts, step-trace) and through it to the earlier ones' (biased, biased-rule,
# biased-evict, host-bar, configs, grids, hard-cells, …).
# This session had no device. First on any GPU: `next.sh static-tests`, `causal-backward-ab`, `static-bar`,
# `static-step`, `causal-backward-grids` (predictions in docs/perf-notes.md, fifty-first session), then the
# fiftieth session's list.
# static-tests (issues 29, 26): test_compile.py and the backward part's causal tests on the GPU, the new ones among
#   them (our kernels' launchers static, and Triton's with SOFTMAX_BENCH_STATIC_LAUNCH=0, the results bit for bit the
#   eager call's; torch.func's transforms compiled; the causal backward's reads).
# static-bar (issue 29): host-cost.py's bar rows in three processes with nothing set (our kernels launched statically
#   by softmax_bench since this session), a fourth with SOFTMAX_BENCH_STATIC_LAUNCH=0; host-bar.py reads each, and
#   host-cost.py says which launcher our kernels had.
# static-step (issue 29, item 3): step-host.py (the compiled training step) with nothing set and with
#   SOFTMAX_BENCH_STATIC_LAUNCH=0, then the fiftieth session's step-trace (what one step launches, by launcher).
# causal-backward-ab (issue 26): ab-causal-backward.py, fused's causal backward reading what a row keeps and
#   skipping programs of rows that keep nothing, against whole rows (bit for bit). Prediction (docs/perf-notes.md,
#   fifty-first session): the time a fraction of whole rows' near the bytes' (softmax, log): N ≤ 1024 0.35–0.5 and
#   0.67–0.8; 4000 and 4096 0.4–0.55 and 0.7–0.8; 8192 0.55–0.7 and 0.75–0.85; 16384 0.85–0.95 and 0.92–1.0. The
#   risk: fp32 8192's log, whose loads compiled in four waves, not two (sm_90).
# causal-backward-grids (issue 26; COMMIT=SHA): the causal backward's default grid and its log's, auto beside
#   torch.compile (session 33's `grid` step), to commit as causal-backward-h100-s51 and causal-log-backward-h100-s51
#   (h200 when the card is one). Prediction: ahead of torch.compile at every cell fused's backward takes, the log's
#   131072×1024 and 262144×512 among them, by ≥ 1.3×.
set -u
if [[ $1 == causal-backward-ab ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  timeout 560 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session51/ab-causal-backward.py \
    $OUT/ab-causal-backward.csv > $OUT/ab-causal-backward.txt 2>&1
  echo "ab rc=$? at $SECONDS s"; grep -vE "^W|Warning" $OUT/ab-causal-backward.txt | tail -80
  exit 0
fi
if [[ $1 == causal-backward-grids ]]; then
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -qi h200 && echo h200 || echo h100)
  for log in "" --log; do
    bash evidence/experiments/2026-12-04-session33/next.sh grid causal${log:+-log}-backward-$card-s51 --op causal \
      $log --pass backward
  done
  exit 0
fi
case $1 in static-tests|static-bar|static-step) ;; *) exec bash evidence/experiments/2026-12-05-session50/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
if [[ $1 == static-tests ]]; then
  GPU_TEST_WORKERS=8 timeout 500 bash scripts/gpu-tests.sh backward -k "compile or causal or torch_func" -rfE \
    > $OUT/static-tests.txt 2>&1
  echo "static tests rc=$? at $SECONDS s"; tail -15 $OUT/static-tests.txt
  exit 0
fi
if [[ $1 == static-bar ]]; then
  for p in ${PROCS:-a b c off}; do  # PROCS: fewer processes where device time is short
    setting=$([[ $p == off ]] && echo SOFTMAX_BENCH_STATIC_LAUNCH=0 || echo SOFTMAX_BENCH_STATIC_LAUNCH=1)
    timeout 140 env $setting python3 scripts/host-cost.py $OUT/static-bar-$p.csv --op softmax --op scaled-masked \
      --op log-softmax --rounds 5 --row "softmax_bench auto" --row "softmax_bench fused" --row compiled_op \
      --row torch_compile > $OUT/static-bar-$p.txt 2>&1
    echo "host-cost $p ($setting) rc=$? at $SECONDS s"; grep "^compiled_op:" $OUT/static-bar-$p.txt
    python3 scripts/host-bar.py $OUT/static-bar-$p.csv
  done
  exit 0
fi
for setting in SOFTMAX_BENCH_STATIC_LAUNCH=1 SOFTMAX_BENCH_STATIC_LAUNCH=0 SOFTMAX_BENCH_STATIC_LAUNCH=1; do
  f=$OUT/step-${setting: -1}-$SECONDS.txt
  timeout 120 env $setting PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-04-session29/step-host.py \
    > $f 2>&1; echo "step $setting rc=$? at $SECONDS s"; grep host_us $f
done
timeout 90 env PYTHONPATH=$PYTHONPATH:scripts python3 evidence/experiments/2026-12-05-session50/step-trace.py $OUT \
  > $OUT/step-trace.txt 2>&1; echo "step-trace rc=$? at $SECONDS s"; grep -v Warning $OUT/step-trace.txt | tail -30
