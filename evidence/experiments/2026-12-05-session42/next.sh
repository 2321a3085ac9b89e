#!/usr/bin/env bash
# The forty-second session's device steps: bash evidence/experiments/2026-12-05-session42/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (the bundle trimmed as the fortieth session's perf-notes say).
# cxx (issue 29): replayed.cpp (SOFTMAX_BENCH_CXX_REPLAYED) on the H200: the C++ compiler there and the first build's
#   seconds (a cold Triton cache), then test_replayed_cxx (its GPU test: calls it serves bit for bit against the
#   Python's), test_launcher and test_replay on the GPU, then host-cost.py's rows that tell with it off and on, each
#   setting in its own process, twice in turn (off, on, off, on: the host drifts between processes, so each row is
#   read against torch's in its own process). Predictions (perf-notes, forty-second session): the build 5–15 s; the
#   tests pass; with it on, auto's softmax, scaled-masked and log-softmax rows 1.0–2.3 µs lower than with it off,
#   at ≤ 1.0× torch's host µs (from 1.17×).
# occupancy (issue 26): cluster-occupancy.py, the clusters the H200 holds at once for the cluster kernels of the
#   fp32 and bf16 512x262144 rows (where every backward form is under 90 %), by cuOccupancyMaxActiveClusters with each
#   launch's own grid, block, shared memory and cluster. Prediction in the script's header: fp32's backward 14-16
#   clusters of 16 (224-256 CTAs of the 264 its registers allow).
# compiled-static (issue 29): compiled-static-ab.py, compiled_op with Inductor's static launcher for our kernel against
#   compiled_op as it is and torch.compile of the eager code, each a compiled function of one process, their rounds
#   interleaved. Prediction in the script's header: 3-10 µs lower, 1.0-1.15x torch_compile.
# configs SPEC... (issue 26): scripts/cluster-configs.py for each SPEC ("bf16 biased 262144"), every configuration of
#   the cluster kernel timed beside a copy, compiled first (COMPILE_ONLY, the specs side by side). Run in two calls:
#   configs "bf16 biased 262144" "bf16 biased log 262144", then configs "fp32 causal 262144" "fp32 causal log 262144"
#   "bf16 causal 151936". Compiled for sm_90 on a CPU (forty-second session, perf-notes): 16 CTAs of 16 warps take
#   64 registers for the biased bf16 row (two CTAs an SM, the loads in one wave, 728 SASS a thread) where the rule's
#   16 x 8 takes 111 (two CTAs, the loads in two waves [12, 4], 1152); causal fp32 262144 in 16 x 16: 75 registers (one
#   CTA an SM), one wave, against 16 x 8's 125, [15, 1]. Predictions: the biased bf16 row's best ≥ 85 % (auto 79.6),
#   in 16 x 16; the causal fp32 row's best ≥ 92 (auto 90.4). And configs "fp32 backward 262144" (the plain
#   softmax's backward, 89.4): compiled, 16 x 16 with STAGED takes 64 registers (two CTAs an SM: 32 warps, not 16 x
#   8's 16) and one wave of 8 loads (backward-config-scan.txt). Prediction: 16 x 16 ≥ 90.
# Every other step as the forty-first session's next.sh has it.
set -u
case $1 in cxx|occupancy|compiled-static|configs) ;; *) exec bash evidence/experiments/2026-12-05-session41/next.sh "$@" ;; esac
step=$1; shift
case $step in
  cxx)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    { command -v g++ c++ clang++; g++ --version | head -1; } > $OUT/cxx-compiler.txt 2>&1; cat $OUT/cxx-compiler.txt
    timeout 120 python3 -c "
import time, torch
from softmax_bench import replay
began = time.perf_counter(); built = replay.cxx_built()
print(f'replayed.cpp built in {time.perf_counter() - began:.1f} s: {built}, torch {torch.__version__}')" \
      > $OUT/cxx-build.txt 2>&1; echo "build rc=$? at $SECONDS s"; tail -3 $OUT/cxx-build.txt
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_replayed_cxx.py tests/test_launcher.py \
      tests/test_replay.py -rfE > $OUT/tests-cxx.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-cxx.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-cxx.txt
    rows=(--row "replayed launch" --row "softmax_bench auto" --row "softmax_bench fused")
    for take in a b; do
      for cxx in 0 1; do
        SOFTMAX_BENCH_CXX_REPLAYED=$cxx timeout 100 python3 scripts/host-cost.py $OUT/host-cxx$cxx$take.csv \
          --op softmax --op scaled-masked --op log-softmax --rounds 5 "${rows[@]}" > $OUT/host-cxx$cxx$take.txt 2>&1
        echo "host-cost cxx=$cxx ($take) rc=$? at $SECONDS s"; grep -vE "^timing|^written" $OUT/host-cxx$cxx$take.txt
      done
    done
    for f in $OUT/host-cxx0a.csv $OUT/host-cxx1a.csv $OUT/host-cxx0b.csv $OUT/host-cxx1b.csv; do
      echo "issue 29's eager rows, $(basename $f):"  # each process's rows against its own torch rows
      python3 scripts/host-bar.py $f | grep -vE "compiled_op|issue 29's bar"
    done ;;
  occupancy)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
    timeout 200 python3 evidence/experiments/2026-12-05-session42/cluster-occupancy.py $OUT/cluster-occupancy.csv \
      > $OUT/cluster-occupancy.txt 2>&1
    echo "occupancy rc=$? at $SECONDS s"; tail -12 $OUT/cluster-occupancy.txt ;;
  compiled-static)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s42
    timeout 300 python3 evidence/experiments/2026-12-05-session42/compiled-static-ab.py $OUT/compiled-static.csv \
      > $OUT/compiled-static.txt 2>&1
    echo "compiled-static rc=$? at $SECONDS s"; tail -12 $OUT/compiled-static.txt ;;
  configs)
    . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 PYTHONPATH=$PYTHONPATH:$PWD/scripts
    for spec in "$@"; do  # compiled side by side first, then timed one after another
      COMPILE_ONLY=1 timeout 240 python3 scripts/cluster-configs.py /dev/null $spec > /dev/null 2>&1 &
    done; wait; echo "compiled at $SECONDS s"
    for spec in "$@"; do
      name=configs-${spec// /-}
      timeout 200 python3 scripts/cluster-configs.py $OUT/$name.csv $spec > $OUT/$name.txt 2>&1
      echo "$name rc=$? at $SECONDS s"; tail -20 $OUT/$name.txt
    done ;;
esac
