#!/usr/bin/env bash
# The nineteenth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as
# ../2026-12-02-session14/next.sh prep makes it, less .ab/old and the Liger wheel, gpu2.sh installing .ab/whl/*.whl):
#   bash evidence/experiments/2026-12-02-session19/next.sh STEP, STEP one of
# fixes: the GPU tests of this session's changes (the cluster part: CAUSAL_VECTORS_SHAPES; test_auto_table.py: tune's
#   refused write is one line; test_compile.py: the in-graph keep-mask case, now a strict xfail), then
#   in-graph-mask.py (why that case holds the opaque op).
# causal-grid: the causal default grid with auto and torch_compile (run id causal-h200-h). Prediction, from the
#   configurations measured in the first batch (6-causal-configs): bf16 8192×16384 82.0 → ~92 % of its roofline,
#   4096×32768 82.4 → ~97, fp32 8192×16384 88.7 → ~95; every other cell as in causal-h200-g.
# noise-host: scripts/ci-noise-and-slowdown.sh with the host gate: the rerun passes (no false alarm, host cost
#   included), the 5 %-slowed sweep fails at every cell, the host-slowed one (30 %) fails on the host cost.
# causal-configs: cluster-configs.py causal at the causal cells still short of 92 %: bf16 50257 131072 151936
#   262144, fp32 151936 262144.
set -u
case $1 in
  fixes)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    EXTRA="tests/test_auto_table.py tests/test_compile.py" PART_TIMEOUT=300 bash .ab/gpu2.sh t38 cluster
    timeout 120 python3 evidence/experiments/2026-12-02-session19/in-graph-mask.py > $OUT/in-graph-mask.txt 2>&1
    echo "in-graph-mask rc=$?"; grep -v "^W1\|^E1\|^ \{4\}\|^Traceback\|^  File" $OUT/in-graph-mask.txt | head -40 ;;
  causal-grid)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    timeout 300 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op causal --variant auto \
      --variant torch_compile --run-id causal-h200-h > $OUT/causal-h200-h.txt 2>&1
    echo "rc=$?"; tail -50 $OUT/causal-h200-h.txt ;;
  noise-host)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
    mkdir -p /root/nc && timeout 500 bash scripts/ci-noise-and-slowdown.sh /root/nc/noise-ci 5 30 2>&1 | tee $OUT/noise-host.txt
    mkdir -p $OUT/noise-ci && cp /root/nc/noise-ci/*.md $OUT/noise-ci/ && for r in noise-reference noise-rerun noise-host-slowed; do
      mkdir -p $OUT/noise-ci/$r && cp /root/nc/noise-ci/$r/rows.csv /root/nc/noise-ci/$r/meta.json $OUT/noise-ci/$r/; done ;;
  causal-configs)
    . .ab/device-setup.sh && export PYTHONUNBUFFERED=1 && export PYTHONPATH=$PYTHONPATH:$PWD/scripts
    C=scripts/cluster-configs.py
    for w in 50257 131072 151936 262144; do COMPILE_ONLY=1 timeout 150 python3 $C /dev/null bf16 causal $w > /dev/null 2>&1 & done
    for w in 151936 262144; do COMPILE_ONLY=1 timeout 150 python3 $C /dev/null fp32 causal $w > /dev/null 2>&1 & done
    wait
    timeout 200 python3 $C $OUT/configs-causal-bf16.csv bf16 causal 50257 131072 151936 262144
    timeout 120 python3 $C $OUT/configs-causal-fp32.csv fp32 causal 151936 262144
    echo "configs rc=$?" ;;
esac
# Second start (after noise-host found host_us read while CUDA's launch queue was full; timing.HOST_CALLS):
#   host: tests/test_timing.py's GPU test, with HOST_CALLS and with every call timed (it must fail so), then
#   noise-host again.
if [[ $1 == host ]]; then
  . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
  export PYTHONPATH=$PYTHONPATH:/tmp/site
  timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_timing.py -k host_us 2>&1 | tail -2
  timeout 120 python3 -c "
import sys, pytest
from softmax_bench import timing
timing.HOST_CALLS = 10**9  # every call of a batch timed, as before
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_timing.py', '-k', 'host_us']))
" 2>&1 | grep -E "passed|failed|AssertionError" | tail -3
  bash "$0" noise-host
fi
# causal-cells2: the two cells whose configuration the second batch's causal-configs changed (bf16 1024×131072:
#   8 CTAs of 4 warps, was 16; fp32 2048×151936: capped at 128 registers), with torch_compile. Prediction: bf16
#   131072 91.5 → ~96 % of its roofline, fp32 151936 95.0 → ~97.
if [[ $1 == causal-cells2 ]]; then
  . .ab/device-setup.sh && export PYTHONUNBUFFERED=1
  timeout 200 python3 -m softmax_bench sweep --out $OUT/runs --op causal --shape 1024x131072 --shape 2048x151936 \
    --variant auto --variant torch_compile --run-id causal-h200-i > $OUT/causal-h200-i.txt 2>&1
  echo "rc=$?"; grep -v "^ *$" $OUT/causal-h200-i.txt | tail -30
fi
