#!/usr/bin/env bash
# The twentieth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"], .ab as
# ../2026-12-02-session14/next.sh prep makes it, less .ab/old and the Liger wheel, gpu2.sh installing .ab/whl/*.whl):
#   bash evidence/experiments/2026-12-03-session20/next.sh STEP, STEP one of
# first: tests/test_timing.py's GPU host_us test, with timing.HOST_CALLS and with every call of a batch timed (it
#   must fail so); the GPU tests of HEAVIEST_FIRST (test_fusion's, test_cluster's causal ones); then
#   ab-heaviest-first.py.
# noise-host: scripts/ci-noise-and-slowdown.sh with the host gate by variant (a same-commit rerun must pass, the
#   5 %-slowed sweep fail at every cell, the host-slowed one (HOST_PCT, 100: each call
#   costs the host twice its time) fail on auto's host cost, the median over its cells past 50 %).
# causal-grid: the causal default grid with auto and torch_compile (run id causal-h200-j).
set -u
D=evidence/experiments/2026-12-03-session20
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $1 in
  first)
    timeout 120 python3 -m pytest -q -p no:cacheprovider tests/test_timing.py -k host_us 2>&1 | tail -2
    timeout 120 python3 -c "
import sys, pytest
from softmax_bench import timing
timing.HOST_CALLS = 10**9  # every call of a batch timed, as before c6f3aed
sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests/test_timing.py', '-k', 'host_us']))
" 2>&1 | grep -E "passed|failed|AssertionError" | tail -3
    timeout 300 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_fusion.py tests/test_cluster.py -k causal \
      -rfE > $OUT/causal-tests.txt 2>&1; echo "causal tests rc=$?"; tail -4 $OUT/causal-tests.txt
    PYTHONPATH=$PYTHONPATH:$PWD/scripts timeout 400 python3 $D/ab-heaviest-first.py $OUT/ab-heaviest-first.csv \
      > $OUT/ab-heaviest-first.txt 2>&1; echo "ab rc=$?"; cat $OUT/ab-heaviest-first.txt ;;
  noise-host)
    mkdir -p /root/nc && timeout 500 bash scripts/ci-noise-and-slowdown.sh /root/nc/noise-ci 5 ${HOST_PCT:-100} 2>&1 | tee $OUT/noise-host.txt
    mkdir -p $OUT/noise-ci && for r in noise-reference noise-rerun noise-host-slowed; do
      mkdir -p $OUT/noise-ci/$r && cp /root/nc/noise-ci/$r/rows.csv $OUT/noise-ci/$r/; done ;;
  causal-grid)
    timeout 300 python3 -m softmax_bench sweep --out $OUT/runs --preset default --op causal --variant auto \
      --variant torch_compile --run-id causal-h200-j > $OUT/causal-h200-j.txt 2>&1
    echo "rc=$?"; tail -60 $OUT/causal-h200-j.txt ;;
esac
