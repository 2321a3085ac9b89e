#!/usr/bin/env bash
# The forty-first session's device steps: bash evidence/experiments/2026-12-05-session41/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the bundle trimmed as the fortieth session's perf-notes say).
# host (issue 29): test_replay on the GPU (its two fast-launch tests take their reference with FAST_LAUNCHES off
#   since 0feb5f6), then the fortieth session's called-once (the A/B of replay.CALLED_ONCE in one process) and the
#   thirty-eighth session's profile (host-profile.py; now with fast launches and CALLED_ONCE). Predictions: test_replay
#   passes; "auto, a new width a call" ≥ 15 µs below "a plan each" (fortieth session's next.sh header). Then the
#   twenty-ninth session's step-host.py (issue 29 item 3: a compiled training step of the masked two-layer model,
#   ours against torch's ops; 1.7× there). Prediction: 1.3–1.7×.
# grids ID... (issue 26): the grids named, each as session 33's `grid` step runs it (COMMIT=SHA):
#   causal-log-backward-h200-d, scaled-log-backward-h200-b, scaled-backward-h200-b, scaled-masked-backward-h200-b,
#   backward-h200-g (the plain softmax's: fp32 512x262144 89.4 in backward-h200-f, before STAGED_AT).
#   Predictions in perf-notes (forty-first session).
# scaled-tiles (issue 26): session 34's backward-tiles for the scaled softmax's backward (no log), bf16 4096x4000,
#   16384x8192, 32768x4096, where torch.compile led the first grid by 0.5-0.9: every tile beside torch.compile, 5
#   rounds. Prediction (with the scale folded into an fma, 065ad81): the default level with or ahead of
#   torch.compile at the three; no tile ≥ 1 point above the default.
# hard-cells (issue 26): the forward cells under 92 % of their roofline beside every variant that runs them (auto's
#   table has entries for the plain softmax and causal only; biased and the logs take the softmax's pick, cluster
#   at these widths): biased bf16 512x262144, causal bf16 2048x151936 and fp32 512x262144, the causal log fp32
#   2048x151936 (COMMIT=SHA). Prediction: cluster (auto) best at each, split and two_pass ≥ 5 points under it.
# Every other step as the fortieth session's next.sh has it.
set -u
case $1 in host|grids|scaled-tiles|hard-cells) ;; *) exec bash evidence/experiments/2026-12-05-session40/next.sh "$@" ;; esac
step=$1; shift
case $step in
  host)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_replay.py -rfE > $OUT/tests-replay.txt 2>&1
    echo "test_replay rc=$? at $SECONDS s: $(tail -1 $OUT/tests-replay.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-replay.txt
    bash evidence/experiments/2026-12-05-session40/next.sh called-once
    bash evidence/experiments/2026-12-05-session40/next.sh profile
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 150 python3 evidence/experiments/2026-12-04-session29/step-host.py \
      > $OUT/step-host.txt 2>&1
    echo "step-host rc=$? at $SECONDS s"; tail -3 $OUT/step-host.txt ;;
  grids)
    for id in "$@"; do
      case $id in
        causal-log-backward-*) args=(--op causal --log) ;;
        scaled-log-backward-*) args=(--op scaled --log) ;;
        scaled-backward-*) args=(--op scaled) ;;
        scaled-masked-backward-*) args=(--op scaled-masked) ;;
        backward-*) args=() ;;  # the plain softmax's
        *) echo "unknown grid $id" >&2; exit 2 ;;
      esac
      bash evidence/experiments/2026-12-04-session33/next.sh grid $id "${args[@]}" --pass backward
    done ;;
  hard-cells)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s41
    for cell in "biased bf16 512x262144" "causal bf16 2048x151936" "causal fp32 512x262144" "causal fp32 2048x151936 --log"; do
      set -- $cell; id=hard-$1-$2-$3${4:+-log}
      SOFTMAX_BENCH_COMMIT=${COMMIT:?set COMMIT=SHA} timeout 140 python3 -m softmax_bench sweep --out $OUT/runs \
        --run-id $id --op $1 --dtype $2 --shape $3 ${4:-} --variant auto --variant cluster --variant split \
        --variant two_pass --variant online --variant torch_compile > $OUT/$id.txt 2>&1
      echo "$id rc=$? at $SECONDS s"; grep -E "auto|cluster|split|two_pass|online|torch_compile" $OUT/$id.txt | head -8
    done
    tar czf $OUT/runs-hard.tgz -C $OUT runs && rm -rf $OUT/runs ;;
  scaled-tiles)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    export PYTHONPATH=$PYTHONPATH:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s41
    timeout 280 python3 scripts/backward-tiles.py $OUT/scaled-tiles-bf16.csv bf16 op=scaled modes=last rounds=5 \
      4096x4000 16384x8192 32768x4096 > $OUT/scaled-tiles-bf16.txt 2>&1
    echo "scaled-tiles rc=$? at $SECONDS s"; tail -40 $OUT/scaled-tiles-bf16.txt ;;
esac
