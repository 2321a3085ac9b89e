#!/usr/bin/env bash
# The sixteenth session's second device command (the first ran the fifteenth session's steps: README.md):
#   bash evidence/experiments/2026-12-02-session16/next.sh b2   (device; carry [".bundles/triton-3.8.0-slim.tar.xz",
#   ".ab"], .ab as evidence/experiments/2026-12-02-session14/next.sh prep makes it)
# 1. the cluster part of the GPU suite (cluster.CAUSAL_VECTORS now "measured": its test forces "all" and "none");
# 2. causal-rows.py: fused's ROWS and warps on the narrow causal cells (~2.5 min);
# 3. ce-profile.py: cProfile of the loss's step and forward (~20 s);
# 4. the default grid's causal op, auto beside torch.compile (run id causal-h200-e: vectors in the plain rows'
#    configuration for 16-bit rows, and fp32 2048 on fused by AutoTable.pick's TIE).
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
  *) echo "usage: next.sh b2" >&2; exit 2 ;;
esac
