#!/usr/bin/env bash
# The seventy-fifth session's device steps: COMMIT=SHA LEFT_S=S bash evidence/experiments/2026-12-07-session75/next.sh STEP
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"].
# scan-entries (any card; ~2 min): biased rows/64's wide cells at 8192x50257, 4096x128256, 2048x151936, 512x262144, in
#   bf16 and fp32, auto beside torch_compile with SHARED_BIASED as committed (shared-before-<card>-s75), then with the
#   entries session 75's biased-scan found ahead (shared-scan-<card>-s75): bf16 50257 2 x 8 capped at 128, bf16 151936
#   16 x 8 capped at 64, fp32 262144 16 x 4 capped at 168; bf16 128256 back to BIASED's 16 x 8.
set -u
. evidence/experiments/device-step.sh  # card, tag, pack, left, bar_sweep
if [[ ${1:-} == scan-entries ]]; then
  . .ab/device-setup.sh > /dev/null && export PYTHONUNBUFFERED=1
  commit=${COMMIT:?set COMMIT=SHA}
  cells="--shape 8192x50257 --shape 4096x128256 --shape 2048x151936 --shape 512x262144 --dtype bf16 --dtype fp32"
  left 60 && bar_sweep shared-before-$tag-s75 $cells --op biased --mask-shape rows/64
  entries="import softmax_bench.kernels.cluster as c; s = c.SHARED_BIASED; s[2].pop(128256, None); \
s[2][50257] = (2, 8, 1, 128); s[2][151936] = (16, 8, 1, 64); s[4][262144] = (16, 4, 1, 168)"
  left 60 && SWEEP_SET=$entries \
    bar_sweep shared-scan-$tag-s75 $cells --op biased --mask-shape rows/64
fi
