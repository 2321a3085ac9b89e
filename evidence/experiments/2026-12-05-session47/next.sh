#!/usr/bin/env bash
# The forty-seventh session's device steps: bash evidence/experiments/2026-12-05-session47/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA for the sweeps. Every other step as the forty-sixth
# session's next.sh has it (biased, parts, cxx-more, biased-log-fused, configs, host, grids, hard-cells, …).
# biased-warps (issue 26): fused's warps a program on the biased forms of rows it holds whole, fp32 and bf16, forward
#   and log, beside a copy (scripts/fused-configs.py). On the H100 (forty-seventh session) the biased log's fp32
#   16384x8192 ran 100.5 % of a copy in the default 8 warps and 101.6 in 32 (16: 100.9): three streams (x, the bias,
#   y) want more warps an SM in flight than a plain row's two. Prediction for the H200: 32 warps ≥ 1 point above the
#   default at fp32 8192, forward and log; then launch_config for the biased forms takes it where it is ahead at
#   every cell measured, and the biased log's fp32 16384x8192 is ahead of torch.compile's 103.2.
set -u
case $1 in biased-warps) ;; *) exec bash evidence/experiments/2026-12-05-session46/next.sh "$@" ;; esac
. .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1 PYTHONPATH=${PYTHONPATH:-}:$PWD/scripts
for form in "fp32 biased" "fp32 biased log" "bf16 biased" "bf16 biased log"; do
  name=fused-${form// /-}
  timeout 150 python3 scripts/fused-configs.py $OUT/$name.csv $form 16384x8192 32768x4096 > $OUT/$name.txt 2>&1
  echo "$name rc=$? at $SECONDS s"; tail -28 $OUT/$name.txt
done
