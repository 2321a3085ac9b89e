#!/usr/bin/env bash
# the cluster part first (the tenth session's kernel changes), the key-padded sweep, then kernels and backward (3.8)
export PYTHONUNBUFFERED=1
GPU_TEST_WORKERS=16 PART_TIMEOUT=170 EXTRA="--timeout=240" bash evidence/experiments/2026-12-01-session7/gpu-parts.sh t38 cluster
SWEEP_TIMEOUT=150 bash evidence/experiments/2026-12-01-session9/s5.sh key-padded key-padded-h200-b
GPU_TEST_WORKERS=16 PART_TIMEOUT=150 EXTRA="--timeout=240" bash evidence/experiments/2026-12-01-session7/gpu-parts.sh t38 kernels backward
