#!/usr/bin/env bash
# The thirty-fifth session's device steps: bash evidence/experiments/2026-12-04-session35/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"] (as the thirty-fourth session's next.sh, whose steps this one
# keeps: mask-early, backward-tiles, kept-causal, late-y; their predictions are in its header).
# staged (issue 26; first): the GPU tests of cluster_backward.STAGED_AT (softmax's dy, log_softmax's y copied into
#   shared memory by cp.async, one row held across the exchange; built off in the thirty-fifth session, compiled for
#   sm_90 only), then ab-staged.py (as is against staged, bit for bit) at the cells of the backwards under 92.
#   Prediction (its docstring): staged ≥ 92 % of a copy at fp32 512×262144 (softmax, scaled-masked, the scaled and
#   masked logs) and at the masked log's fp32 8192×50257 and 2048×151936; ±1 at bf16 512×262144 and fp32
#   1024×131072 softmax; every dx bit for bit. If it holds: STAGED_AT takes the (dtype, width)s where it gained,
#   then the grids of the backwards it changes (session 33's `grid`, COMMIT=SHA) and `parts cluster`.
# x-staged (issue 26): the GPU tests of cluster.X_STAGED_AT (the forward's 16-bit row staged in shared memory, read
#   by each pass; built off, compiled for sm_90 only: every y bit for bit against the held row's), then
#   ab-x-staged.py. Prediction (its docstring): staged capped at 64 registers ≥ 92 % of a copy at causal bf16
#   2048×151936 (90.5), softmax and log_softmax; ±1 elsewhere; bit for bit. If it holds: X_STAGED_AT takes those
#   cells with their cap, then the causal grids (forward and log) and `parts cluster`.
set -u
case $1 in mask-early|backward-tiles|kept-causal|late-y) exec bash evidence/experiments/2026-12-04-session34/next.sh "$@" ;; esac
step=$1; shift
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .ab/whl/*.whl 2>&1 | grep -v WARN
export PYTHONPATH=$PYTHONPATH:/tmp/site:$PWD/scripts TORCHINDUCTOR_CACHE_DIR=/tmp/inductor-s35
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)"
case $step in
  staged)
    GPU_TEST_WORKERS=8 timeout 200 bash scripts/gpu-tests.sh cluster -k "staged and backward" -rfE \
      > $OUT/tests-staged.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-staged.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-staged.txt
    timeout 300 python3 evidence/experiments/2026-12-04-session35/ab-staged.py $OUT/staged.csv "$@" \
      > $OUT/staged.txt 2>&1
    echo "staged rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/staged.txt; grep -c "bit for bit" $OUT/staged.txt ;;
  x-staged)
    GPU_TEST_WORKERS=8 timeout 240 bash scripts/gpu-tests.sh cluster -k "staged and not backward" -rfE \
      > $OUT/tests-x-staged.txt 2>&1
    echo "tests rc=$? at $SECONDS s: $(tail -1 $OUT/tests-x-staged.txt)"; grep -E "^(FAILED|ERROR)" $OUT/tests-x-staged.txt
    timeout 240 python3 evidence/experiments/2026-12-04-session35/ab-x-staged.py $OUT/x-staged.csv "$@" \
      > $OUT/x-staged.txt 2>&1
    echo "x-staged rc=$? at $SECONDS s"; grep -v "bit for bit" $OUT/x-staged.txt; grep -c "bit for bit" $OUT/x-staged.txt ;;
  *) echo "unknown step $step" >&2; exit 2 ;;
esac
