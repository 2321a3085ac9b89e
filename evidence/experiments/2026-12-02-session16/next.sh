#!/usr/bin/env bash
# The sixteenth session's device steps (its first machine start ran the fifteenth session's: README.md).
#   bash evidence/experiments/2026-12-02-session16/next.sh STEP, STEP one of b2, fast, skip, masked, fp32-causal
#   (device; carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as ../2026-12-02-session14/next.sh prep makes it)
# b2 (ran, the second machine start): 1. the cluster part of the GPU suite (cluster.CAUSAL_VECTORS "measured": its
#   test forces "all" and "none"); 2. causal-rows.py, fused's ROWS and warps on the narrow causal cells (~2.5 min);
#   3. ce-profile.py, cProfile of the loss's step and forward (~20 s); 4. the default grid's causal op, auto beside
#   torch.compile (run id causal-h200-e).
# Ready for the next session, not yet run (no device time was left):
# fast (~3 min): replay.FAST_LAUNCHES's GPU test (bit for bit against Triton's own launches), then ce-host.py and
#   scripts/host-cost.py with SOFTMAX_BENCH_FAST_LAUNCHES=0 and =1 (issues 27, 29; prediction: a loss forward at
#   64×128256 from 275–340 to ≤ 150 host µs, a step from 720–1040 to ≤ 800); if both hold, turn it on
#   (replay.FAST_LAUNCHES) and run the GPU suite's parts.
# skip (~2 min): fused.SKIP_MASKED_PROGRAMS (off, checked in the interpreter only): the causal fusion tests on the
#   GPU, then ab-skip-masked.py (prediction in its docstring; issue 26); if it holds, turn it on.
# masked (~4 min): cluster.MASK_BLEND_F32's GPU test (bit for bit), then ab-masked-configs.py: the masked cluster rows
#   in the rule's configuration against the plain rows' under the packed select, fp32 rows also blended (issue 26's
#   masked vocabulary cells).
# fp32-causal (~2.5 min): cluster.POSITIVE_SCALES's GPU test (bit for bit), then ab-fp32-causal.py: why fp32 causal
#   rows lost by vectors (the plain row in the same configuration beside them), and each with POSITIVE_SCALES.
set -u
here=$(dirname $0)
case $1 in
  b2)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    GPU_TEST_WORKERS=16 PART_TIMEOUT=200 EXTRA="--timeout=180 -rs" bash .ab/gpu2.sh t38 cluster
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 200 python3 $here/causal-rows.py $OUT/causal-rows.csv \
      > $OUT/causal-rows.txt 2>&1; echo "causal-rows rc=$?"; tail -n 70 $OUT/causal-rows.txt
    timeout 60 python3 $here/ce-profile.py > $OUT/ce-profile.txt 2>&1; echo "ce-profile rc=$?"
    timeout 130 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op causal --variant auto \
      --variant torch_compile --run-id causal-h200-e > $OUT/causal-h200-e.txt 2>&1; echo "causal sweep rc=$?"
    tail -n 45 $OUT/causal-h200-e.txt ;;
  fast)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_replay.py -rfE 2>&1 | tail -4
    for on in 0 1; do
      SOFTMAX_BENCH_FAST_LAUNCHES=$on timeout 150 python3 evidence/experiments/2026-12-02-session15/ce-host.py \
        $OUT/ce-host-fast$on.csv > $OUT/ce-host-fast$on.txt 2>&1; echo "ce-host fast=$on rc=$?"
      SOFTMAX_BENCH_FAST_LAUNCHES=$on timeout 150 python3 scripts/host-cost.py $OUT/host-cost-fast$on.csv \
        > $OUT/host-cost-fast$on.txt 2>&1; echo "host-cost fast=$on rc=$?"
    done
    grep -h "ours" $OUT/ce-host-fast*.txt ;;
  skip)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_fusion.py -k "causal" -rfE 2>&1 | tail -3
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 300 python3 $here/ab-skip-masked.py $OUT/ab-skip-masked.csv ;;
  masked)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_cluster.py -k "blended" -rfE 2>&1 | tail -3
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 400 python3 $here/ab-masked-configs.py $OUT/ab-masked-configs.csv ;;
  fp32-causal)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_cluster.py -k "positive_scale" -rfE 2>&1 | tail -3
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 200 python3 $here/ab-fp32-causal.py $OUT/ab-fp32-causal.csv ;;
  *) echo "usage: next.sh b2|fast|skip|masked|fp32-causal" >&2; exit 2 ;;
esac
