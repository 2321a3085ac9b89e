#!/usr/bin/env bash
# The sixty-fourth session's device step: bash evidence/experiments/2026-12-06-session64/next.sh
# carry [".bundles/triton-3.8.0-slim.tar.xz", ".ab"]; COMMIT=SHA literal; LEFT_S the seconds the call has.
# On an H200: the sixty-third session's `last` (fp32 causal 512x262144 and its log beside torch_compile, then evict,
# bias-evict, bw-configs and the biased floor, each only if LEFT_S leaves time). On any other card nothing runs:
# everything those steps measure has H100 figures already (sixty-third and sixty-fourth sessions).
set -u
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
grep -qi h200 <<< "$card" || { echo "card: $card: not an H200, nothing run"; exit 0; }
bash evidence/experiments/2026-12-06-session63/next.sh last
