#!/usr/bin/env bash
# The eighteenth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as
# ../2026-12-02-session14/next.sh prep makes it, less .ab/old and the Liger wheel, gpu2.sh installing .ab/whl/*.whl):
#   bash evidence/experiments/2026-12-02-session18/next.sh STEP, STEP one of
# t38-b: the cluster and instrument parts of the GPU suite with the seventeenth session's switches on (~5 min).
# in-graph (issue 29): tests/test_compile.py with library.IN_GRAPH on (the GPU tests that set it keep their own),
#   after kernels.traced_arguments; then scripts/host-cost.py --op softmax with it on. Prediction: no
#   "Incorrect number of arguments" from inductor's identify_mutated_tensors, so no input assumed mutated and no
#   functionalization of the bool keep-mask ("Subtraction ... with two bool tensors": the second failure seen in
#   the seventeenth session is the first's consequence); compiled_op's host µs ~100 → within 10 % of torch_compile.
# causal-configs (issue 26): cluster-configs.py for causal at the short widths, bf16 16384 32768 and fp32 16384
#   (by vectors, scale 0.125 > 0), then the fp32 4096x128256 cell again (it fell 97.2 → 92.3 in causal-h200-f).
#   Prediction: the causal rows are latency-bound (the plain and causal times agree: skipping the masked reads
#   frees no registers, so no more rows are in flight); a configuration of more rows in flight an SM (a register
#   cap, fewer warps) beats the plain rows' (bf16 16384: 2 CTAs of 8 warps, 82.6 % of the roofline).
# noise (issue 30): ../2026-12-02-session15/noise-rule.py: the default grid twice at --max-noise off and 1 (NOISE_TARGETS),
#   then the 5 %-slowed sweep at 1, and the report.
# tune-causal (issue 26): `tune --preset default --op causal` into a copy of the shipped H200 table (its causal
#   entries join the plain softmax's), $OUT/nvidia-h200-triton3.8.json. Prediction: cluster at fp32 16384 (causal
#   by vectors: 101 % of a copy in ab-fp32-causal.csv, where auto's fused ran 87 %); fused wherever it runs below.
# The first batch of these steps (c187fd8's parent) found softmax_bench unimportable under torch 2.11 (library.triton_op).
# causal-cells (issue 26): the causal fp32 cells at 16384 (auto now cluster, by the causal entries) and 128256.
# For the next session (one start, ~20 min, in this order): t38-instrument (~2.5 min: the test fixed after h-), t38-a
#   (../2026-12-02-session14/next.sh t38-a, ~3.5 min: kernels and backward after the per-form tables and
#   UNCAPPED_CAUSAL), causal-cells (fp32 128256 with UNCAPPED_CAUSAL: predicted ~98 % of its roofline, from 91.4),
#   in-graph (after the fp32 scale: predicted the log_softmax test passes; the keep-mask one still opaque),
#   noise-script (scripts/ci-noise-and-slowdown.sh as it stands: rerun exit 0, 5 %-slowed exit 1 at 32 of 32),
#   causal-grid (the causal default grid with auto and torch_compile, run id causal-h200-g), causal-configs.
set -u
D=evidence/experiments/2026-12-02-session15
case $1 in
  t38-b) bash evidence/experiments/2026-12-02-session14/next.sh t38-b ;;
  in-graph)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 280 python3 -c "
import sys, pytest
from softmax_bench import library
library.IN_GRAPH = True
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-n', '8', 'tests/test_compile.py', '-rfE']))
" > $OUT/t38-compile-in-graph.txt 2>&1
    echo "compile tests, IN_GRAPH on: rc=$?"; tail -25 $OUT/t38-compile-in-graph.txt
    echo "identify_mutated_tensors failures: $(grep -c 'Encountered an exception in identify' $OUT/t38-compile-in-graph.txt)"
    timeout 200 python3 -c "
import runpy, sys
from softmax_bench import library
library.IN_GRAPH = True
sys.argv = ['host-cost.py', '$OUT/host-cost-in-graph.csv', '--op', 'softmax']
runpy.run_path('scripts/host-cost.py', run_name='__main__')
" > $OUT/host-cost-in-graph.txt 2>&1
    echo "host-cost rc=$?"; grep -v "^W1\|^E1\|^ " $OUT/host-cost-in-graph.txt | tail -40 ;;
  causal-configs)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1 && export PYTHONPATH=$PYTHONPATH:$PWD/scripts
    C=scripts/cluster-configs.py
    for w in 16384 32768; do COMPILE_ONLY=1 timeout 150 python3 $C /dev/null bf16 causal $w > /dev/null 2>&1 & done
    COMPILE_ONLY=1 timeout 150 python3 $C /dev/null fp32 causal 16384 > /dev/null 2>&1 &
    wait
    timeout 150 python3 $C $OUT/configs-causal-bf16.csv bf16 causal 16384 32768
    timeout 100 python3 $C $OUT/configs-causal-fp32.csv fp32 causal 16384
    timeout 120 python3 -m softmax_bench sweep --out $OUT/runs --op causal --dtype fp32 --shape 4096x128256 \
      --shape 8192x16384 --variant auto --variant cluster --variant fused --run-id causal-fp32-rerun > $OUT/causal-fp32-rerun.txt 2>&1
    echo "rerun rc=$?"; tail -22 $OUT/causal-fp32-rerun.txt ;;
  noise)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 420 python3 $D/noise-rule.py sweeps /root/noise ${NOISE_TARGETS:-off 1}
    timeout 120 python3 $D/noise-rule.py slowed /root/noise 1 5 > $OUT/slowed.txt 2>&1
    echo "slowed rc=$?"; tail -3 $OUT/slowed.txt
    python3 $D/noise-rule.py report /root/noise | tee $OUT/noise-report.txt
    mkdir -p $OUT/noise && cp -r /root/noise/. $OUT/noise/ ;;
  tune-causal)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    cp softmax_bench/auto_tables/nvidia-h200-triton3.8.json $OUT/
    timeout 330 python3 -m softmax_bench tune --preset default --op causal --table $OUT/nvidia-h200-triton3.8.json \
      > $OUT/tune-causal.txt 2>&1
    echo "tune rc=$?"; tail -45 $OUT/tune-causal.txt ;;
  causal-cells)  # the one causal cell the causal entries change (fp32 16384: cluster, was fused), and fp32 128256
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 150 python3 -m softmax_bench sweep --out $OUT/runs --op causal --dtype fp32 --shape 8192x16384 \
      --shape 4096x128256 --variant auto --variant fused --variant cluster --run-id causal-fp32-h200-g \
      > $OUT/causal-fp32-h200-g.txt 2>&1
    echo "rc=$?"; tail -22 $OUT/causal-fp32-h200-g.txt ;;
  t38-instrument) . .ab/device-setup.sh && GPU_TEST_WORKERS=16 PART_TIMEOUT=280 EXTRA="--timeout=240 -rs" \
      bash .ab/gpu2.sh t38 instrument ;;
  noise-script)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 400 bash scripts/ci-noise-and-slowdown.sh $OUT/noise-ci 5 ;;
  causal-grid)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 250 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op causal --variant auto \
      --variant torch_compile --run-id causal-h200-g > $OUT/causal-h200-g.txt 2>&1
    echo "rc=$?"; tail -45 $OUT/causal-h200-g.txt ;;
  *) echo "usage: next.sh t38-b|in-graph|causal-configs|noise|tune-causal|causal-cells|t38-instrument|noise-script|causal-grid" >&2
     exit 2 ;;
esac
