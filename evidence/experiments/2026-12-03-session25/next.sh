#!/usr/bin/env bash
# The twenty-fifth session's device steps (carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; .ab is session 14's
# `next.sh prep` without .ab/old):
#   bash evidence/experiments/2026-12-03-session25/next.sh STEP [ARG ...], STEP one of
# ce-split: ce-split.py, each piece of the loss's step timed alone, then one step's kernels on the GPU's timeline.
# ce-configs DTYPE N ...: scripts/cluster-configs.py's loss and loss-grad modes (cross_entropy's rows on a cluster
#   without and with the gradient, every configuration).
# tests: the GPU tests of the loss and the cluster kernels (test_cross_entropy.py, test_cluster.py, test_real_model.py).
# ce-sweep ID: sweep --preset vocab --op cross-entropy --pass both with the peers (eager, torch_compile, liger).
# cells: the biased fp32 4096×128256 --log cell after its LOG_REGISTERS cap (run id biased-log-h200-c).
set -u
step=$1; shift
D=evidence/experiments/2026-12-03-session25
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  ce-split) timeout 240 python3 $D/ce-split.py $OUT/ce-split.csv 2>&1 | grep -v Warn | tee $OUT/ce-split.txt ;;
  ce-configs)
    for mode in loss loss-grad; do
      timeout 250 python3 scripts/cluster-configs.py $OUT/ce-configs-$mode-$1.csv $mode "$@" 2>&1 | grep -v Warn \
        | grep -E "BEST|default|error|WRONG"
    done ;;
  tests)
    timeout 330 python3 -m pytest -q -p no:cacheprovider -n 16 tests/test_cross_entropy.py tests/test_cluster.py \
      tests/test_real_model.py -rfE > $OUT/tests.txt 2>&1; echo "tests rc=$? at $SECONDS s"; tail -5 $OUT/tests.txt ;;
  ce-sweep)
    timeout 400 python3 -m softmax_bench sweep --out $OUT/runs --preset vocab --op cross-entropy --pass both \
      --variant fused --variant eager --variant torch_compile --variant liger --run-id $1 > $OUT/$1.txt 2>&1
    echo "$1 rc=$? at $SECONDS s"; grep -E "│" $OUT/$1.txt | tail -40 ;;
  cells)
    timeout 100 python3 -m softmax_bench sweep --out $OUT/runs --op biased --log --dtype fp32 --shape 4096x128256 \
      --variant auto --variant torch_compile --run-id biased-log-h200-c > $OUT/biased-log-h200-c.txt 2>&1
    echo "biased-log-h200-c rc=$? at $SECONDS s"; tail -12 $OUT/biased-log-h200-c.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
