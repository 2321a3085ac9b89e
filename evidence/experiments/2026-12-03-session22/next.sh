#!/usr/bin/env bash
# The twenty-second session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as the
# session summary in docs/perf-notes.md's twenty-first entry makes it):
#   bash evidence/experiments/2026-12-03-session22/next.sh STEP, STEP one of
# biased-configs: the GPU tests of cluster's bias (BIAS_BLEND bit for bit, against float64), then the biased op's
#   cluster configurations (scripts/cluster-configs.py, compiled first a width a process side by side) with
#   BIAS_BLEND off and on: bf16 at the widths it ran at 38–70 % of its roofline in biased-h200, fp32 at 59–69 %.
# biased-grid: bf16 131072's biased configurations (with BIAS_BLEND), then the biased default grid with auto and
#   torch_compile (run id $RUN_ID, default biased-h200-b).
# biased-after: bf16 16384's biased configurations, then a sweep of the bf16 biased cells short of 92 % in
#   biased-h200-b (run id biased-bf16-h200-c; the 16384 cell again after its BIASED entry: biased-bf16-16384-h200-d,
#   its command in evidence/runs/biased-bf16-16384-h200-d/meta.json).
# causal-bits: fused.CAUSAL_BITS's GPU tests and its A/B (ab-causal-bits.py), for the next session.
# log-grids: the default grid of scaled-masked, causal and biased with --log, and of --op scaled (auto and
#   torch_compile), for the next session: issue 26's "the log_softmax of each", never measured.
# causal: the causal default grid with auto and torch_compile (run id causal-h200-k), and the mask-blend test that
#   failed once in the twenty-first session, three times.
set -u
D=evidence/experiments/2026-12-03-session22
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
export PYTHONPATH=$PYTHONPATH:$PWD/scripts
case $1 in
  biased-configs)
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_cluster.py -k bias -rfE > $OUT/bias-tests.txt 2>&1
    echo "bias tests rc=$?"; tail -4 $OUT/bias-tests.txt
    for blend in 0 1; do for d in "bf16 50257 65536 128256 151936 262144" "fp32 128256 151936 262144"; do
      set -- $d; dtype=$1; shift
      for n in "$@"; do
        BIAS_BLEND=$blend COMPILE_ONLY=1 timeout 240 python3 scripts/cluster-configs.py /tmp/c.csv $dtype biased $n \
          > /tmp/compile-$blend-$dtype-$n.txt 2>&1 &
      done
    done; done
    wait; echo "compiled at $SECONDS s"
    for blend in 0 1; do for dtype in bf16 fp32; do
      widths="50257 65536 128256 151936 262144"; [ $dtype = fp32 ] && widths="128256 151936 262144"
      BIAS_BLEND=$blend timeout 200 python3 scripts/cluster-configs.py $OUT/biased-$dtype-blend$blend.csv $dtype biased \
        $widths > $OUT/biased-$dtype-blend$blend.txt 2>&1
      echo "blend $blend $dtype rc=$? at $SECONDS s"; grep -E "BEST|default|error" $OUT/biased-$dtype-blend$blend.txt
    done; done ;;
  biased-grid)
    for n in 131072; do
      timeout 200 python3 scripts/cluster-configs.py $OUT/biased-bf16-$n.csv bf16 biased $n > $OUT/biased-bf16-$n.txt 2>&1
      echo "bf16 $n rc=$? at $SECONDS s"; grep -E "BEST|default|error" $OUT/biased-bf16-$n.txt
    done
    timeout 400 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op biased --variant auto \
      --variant torch_compile --run-id ${RUN_ID:-biased-h200-b} > $OUT/${RUN_ID:-biased-h200-b}.txt 2>&1
    echo "rc=$?"; tail -50 $OUT/${RUN_ID:-biased-h200-b}.txt ;;
  biased-after)  # bf16 16384's biased configurations; the bf16 cells short of 92 % in biased-h200-b, again
    timeout 100 python3 scripts/cluster-configs.py $OUT/biased-bf16-16384.csv bf16 biased 16384 > $OUT/biased-bf16-16384.txt 2>&1
    echo "bf16 16384 rc=$? at $SECONDS s"; grep -E "BEST|default|error" $OUT/biased-bf16-16384.txt
    timeout 120 python3 -m softmax_bench sweep --out $OUT/runs --op biased --dtype bf16 --shape 8192x16384 \
      --shape 1024x131072 --shape 512x262144 --variant auto --variant torch_compile --run-id biased-bf16-h200-c \
      > $OUT/biased-bf16-h200-c.txt 2>&1; echo "rc=$?"; tail -22 $OUT/biased-bf16-h200-c.txt ;;
  causal-bits)  # (next session) fused.CAUSAL_BITS: its GPU tests, then the A/B
    timeout 200 python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_fusion.py -k "causal or bits" -rfE \
      > $OUT/causal-bits-tests.txt 2>&1; echo "tests rc=$?"; tail -3 $OUT/causal-bits-tests.txt
    timeout 400 python3 $D/ab-causal-bits.py $OUT/ab-causal-bits.csv > $OUT/ab-causal-bits.txt 2>&1
    echo "ab rc=$?"; cat $OUT/ab-causal-bits.txt ;;
  log-grids)  # (next session) the fused forms' log_softmax and a scale alone on the default grid, never measured
    for op in scaled-masked causal biased; do
      timeout 280 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op $op --log --variant auto \
        --variant torch_compile --run-id $op-log-h200 > $OUT/$op-log-h200.txt 2>&1; echo "$op --log rc=$? at $SECONDS s"
    done
    timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op scaled --variant auto \
      --variant torch_compile --run-id scaled-h200 > $OUT/scaled-h200.txt 2>&1; echo "scaled rc=$? at $SECONDS s" ;;
  causal)
    timeout 300 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op causal --variant auto \
      --variant torch_compile --run-id causal-h200-k > $OUT/causal-h200-k.txt 2>&1
    echo "rc=$?"; tail -50 $OUT/causal-h200-k.txt
    for i in 1 2 3; do
      timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_cluster.py -k blended_as_bits -rfE 2>&1 | tail -3
    done ;;
esac
